// chorus why RUN TASK [--attempt N] [--json] [--state DIR]: why a task attempt went where it did,
// from the placement record the network-aware policy journaled with its `running` event: the
// candidate nodes with their predicted times, the basis of the estimates (model FILE, analytic,
// stale telemetry with its age, fallback), the features that differ most between the chosen node
// and the runner-up, and how long the attempt actually took (from its events).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "schedulers/netaware/features.hpp"
#include "schedulers/policy_registry.hpp"
#include "workflows/workflow_loader.hpp"

namespace chorus::cli {
namespace {

[[noreturn]] void fail(const Output& out, const std::string& message, int code = kExitBadInput) {
  out.error(message);
  throw CLI::RuntimeError(code);
}

// The run's workflow file as it is now; nullopt when it cannot be read any more (an embedded
// run has none).
std::optional<WorkflowGraph> workflow_of(const RunInfo& run) {
  if (run.workflow_path.empty()) return std::nullopt;
  WorkflowLoadOptions options;
  options.base_dir = run.workdir;
  auto graph = load_workflow_file(run.workflow_path, options);
  if (!graph.ok()) return std::nullopt;
  return std::move(*graph);
}

// The placement policy the run's workflow file names (the default when it names none); empty
// when the file cannot be read any more.
std::string workflow_placement(const RunInfo& run) {
  auto graph = workflow_of(run);
  if (!graph) return {};
  if (!graph->scheduler.planner.empty()) return "planned";
  return graph->scheduler.placement.empty() ? kDefaultPlacementPolicy : graph->scheduler.placement;
}

void add_why_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "why", "Explain where a task was placed: candidates, predicted times, basis, actual time");
  struct Args {
    std::string run;
    std::string task;
    std::uint32_t attempt = 0;
    std::string state_dir;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id, a unique prefix, or 'latest'")->required();
  cmd->add_option("task", a->task, "Task name, as `chorus status --tasks` shows it")->required();
  cmd->add_option("--attempt", a->attempt, "Which attempt (default: the latest placed)");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] {
    const Output out = Output::for_command(a->json);
    auto [store, run] = open_run_or_exit(a->state_dir, a->run);
    const auto events = events_or_exit(*store, run);

    // The task's attempts from its events: when each started, how each ended.
    std::set<std::string> names;
    TaskId task = kNoTask;
    std::map<std::uint32_t, double> started;
    std::map<std::uint32_t, std::pair<TaskState, double>> ended;
    bool seen = false;
    std::string last;  // the task's last event, "cancelled: run cancelled"
    for (const auto& e : events) {
      names.insert(e.name);
      if (e.name != a->task) continue;
      seen = true;
      task = e.task;
      last = std::string(to_string(e.state)) + (e.detail.empty() ? "" : ": " + e.detail);
      if (e.state == TaskState::running) {
        started.try_emplace(e.attempt, e.time);  // a service's second `running` = ready
      } else if (is_terminal(e.state)) {
        ended[e.attempt] = {e.state, e.time};
      }
    }
    if (!seen) {
      if (auto graph = workflow_of(run)) {
        for (const TaskSpec& t : graph->tasks) {
          if (t.name == a->task) {
            fail(out, "task '" + a->task + "' of run '" + run.id +
                          "' has not been placed yet (still pending): there is no decision to "
                          "explain");
          }
        }
      }
      const std::vector<std::string> known(names.begin(), names.end());
      fail(out, "run '" + run.id + "' has no task '" + a->task + "' in its journal" +
                    did_you_mean(a->task, known));
    }
    if (started.empty()) {
      fail(out, "task '" + a->task + "' of run '" + run.id + "' was never placed (" + last +
                    "): there is no decision to explain");
    }
    const std::uint32_t attempt = a->attempt != 0 ? a->attempt : started.rbegin()->first;
    if (started.count(attempt) == 0) {
      fail(out, "task '" + a->task + "' of run '" + run.id + "' has no attempt " +
                    std::to_string(attempt) + " (attempts placed: 1.." +
                    std::to_string(started.rbegin()->first) + ")");
    }

    auto rows = store->placements(run.id);
    if (!rows.ok()) fail(out, rows.status().message(), kExitError);
    const PlacementRow* row = nullptr;
    std::string explaining;
    for (const auto& r : *rows) {
      explaining = r.policy;
      if (r.task == task && r.attempt == attempt) row = &r;
    }
    if (row == nullptr) {
      std::string policy = explaining.empty() ? workflow_placement(run) : std::string();
      if (!explaining.empty()) {
        // The run's policy explains, but not this attempt (an MPI task spread over nodes, a
        // function task, or a task that holds no cores, is not a candidate choice).
        fail(out, "task '" + a->task + "' attempt " + std::to_string(attempt) + " of run '" +
                      run.id + "' has no placement record: " + explaining +
                      " journals single-node decisions (an MPI task spread over nodes is not one)");
      }
      fail(out, "task '" + a->task + "' attempt " + std::to_string(attempt) + " of run '" + run.id +
                    "' was placed by " +
                    (policy.empty() ? std::string("a policy that journals no reasons") : policy) +
                    ": chorus why explains network-aware decisions only");
    }

    WhyReport report{run.id, *row, "running", -1, placement_differences(*row, 5)};
    const double start = started[attempt];
    if (auto it = ended.find(attempt); it != ended.end()) {
      report.outcome = to_string(it->second.first);
      report.actual_s = it->second.second - start;
    } else if (effective_status(run) == RunStatus::running) {
      report.actual_s = wall_seconds_now() - start;
    } else {
      report.outcome = "never finished (the run ended)";
    }
    out.placement_why(report);
  });
}

const CommandRegistrar registrar{"why", add_why_command};

}  // namespace
}  // namespace chorus::cli
