// chorus launch FILE [--resume [RUN]]: run a workflow INSIDE a Slurm allocation, across its nodes,
// on the Slurm backend (runtime/backends/slurm_backend.hpp): one agent per node, all started by
// ONE srun step (--no-agents: each task its own srun step instead); MPI tasks as
// `srun --mpi=pmix` steps; function tasks in this process.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "adapters/slurm/allocation.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/run_common.hpp"
#include "cli/workflow_input.hpp"
#include "runtime/backends/slurm_backend.hpp"

namespace chorus::cli {
namespace {

struct LaunchArgs : CommonRunArgs {
  bool no_agents = false;
  std::string node_logs;  // agents keep task output on their node, here (%n = node name)
};

int launch_command(LaunchArgs a) {
  auto alloc = read_slurm_allocation();
  if (!alloc.ok()) {
    if (std::getenv("SLURM_JOB_ID") == nullptr) {
      print_error(
          "chorus launch runs inside a Slurm allocation (SLURM_JOB_ID is not set); use chorus run "
          "here or chorus submit --slurm");
    } else {
      print_error("cannot read the Slurm allocation: " + alloc.status().message());
    }
    return kExitBadInput;
  }
  auto grace = prepare_run(a, "chorus launch");
  if (!grace) return kExitBadInput;
  auto graph = load_workflow_for_cli(a.file, alloc->nodes);
  if (!graph.ok()) {
    print_error(graph.status().message());
    return kExitBadInput;
  }
  if (!graph->scheduler.planner.empty()) {
    // Refused rather than ignored: the plan would need the agents' nodes before they register.
    print_error(a.file + ":" + std::to_string(graph->scheduler.planner_line) + ":" +
                std::to_string(graph->scheduler.planner_column) +
                ": 'planner: " + graph->scheduler.planner +
                "' is not supported by chorus launch yet (chorus run places by a plan); remove "
                "it to run with the queue and placement policies");
    return kExitBadInput;
  }
  SlurmBackendOptions so;
  so.allocation = std::move(*alloc);
  so.agents = !a.no_agents;
  so.listen = a.listen;
  so.node_logs = a.node_logs;
  so.kill_grace = *grace;
  if (a.no_agents) {
    if (!a.node_logs.empty()) {
      print_error("--node-logs needs agents (it is where they keep task output); drop --no-agents");
      return kExitBadInput;
    }
  } else {
    auto times = parse_agent_times(a);
    if (!times) return kExitBadInput;
    so.agent_timeout = times->timeout;
    so.agent_wait = times->wait;
    so.on_all_lost = report_all_agents_lost;
  }
  auto backend = make_slurm_backend(std::move(so));
  int code = run_and_report(a, *grace, *graph, RunOptions{}, "chorus launch", backend.get());
  if (code == kExitError) {
    std::string tail = backend->site_output(10);
    if (!tail.empty()) std::fprintf(stderr, "agent step output (last lines):\n%s\n", tail.c_str());
  }
  return code;
}

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "launch", "Run a workflow across the nodes of the Slurm allocation this runs in");
  auto a = std::make_shared<LaunchArgs>();
  add_common_run_options(cmd, a);
  cmd->add_flag("--no-agents", a->no_agents,
                "Run each executable task as its own srun step instead of on agents");
  cmd->add_option("--node-logs", a->node_logs,
                  "Agents keep task output on their node in DIR/<run id>/ (%n = node name, e.g. "
                  "/tmp/slurm-tmp/%n/chorus); chorus logs fetches it while the run lives, failed "
                  "tasks' output is collected into the run folder");
  cmd->callback([a, cmd] {
    note_resume(cmd, *a);
    int code = launch_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"launch", add_launch_command};

}  // namespace
}  // namespace chorus::cli
