// chorus logs RUN TASK: a task's stdout (to stdout) and stderr (to stderr), latest attempt.
// Output kept on an agent's node (chorus agent --node-logs) is fetched through the run's
// coordinator while it lives; after the run only failed attempts' output is in the run folder
// (collected), and for the rest this says on which node and where it stayed.
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "core/host_name.hpp"
#include "core/text.hpp"
#include "runtime/agent/log_fetch.hpp"
#include "runtime/log_paths.hpp"

namespace chorus::cli {
namespace {

bool copy_file(const std::string& path, std::ostream& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out << in.rdbuf();
  out.flush();
  return true;
}

// The node an attempt ran on, from its journaled `running` event ("" when not placed).
std::string node_of(StateStore& store, const std::string& run, TaskId task, std::uint32_t attempt) {
  auto events = store.events(run);
  if (!events.ok()) return {};
  for (const auto& e : *events) {
    if (e.task == task && e.attempt == attempt && !e.node.empty()) return e.node;
  }
  return {};
}

// Fetches one stream of an attempt whose output its node kept, from the live run. Returns false
// when it could not be shown.
bool fetch_node_local(const Output& out, const std::string& task, unsigned attempt,
                      const std::string& stream, const std::string& node, const std::string& path,
                      const std::string& control, std::ostream& to) {
  if (control.empty()) {
    out.error("task '" + task + "' attempt " + std::to_string(attempt) + ": its " + stream +
              " stayed on node " + node + " in " + path +
              "; the run's coordinator has no control socket (its key folder path is too long "
              "for a Unix socket), so chorus cannot fetch it");
    return false;
  }
  Status s = fetch_node_file(control, node, path, [&](std::string_view piece) {
    to.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  });
  to.flush();
  // A stream the task never wrote to has no file: empty output, as for shared output.
  if (s.ok() || s.code() == ErrorCode::not_found) return true;
  out.error("cannot fetch the " + stream + " of task '" + task + "' attempt " +
            std::to_string(attempt) + " from node " + node + ": " + s.message());
  return false;
}

void add_logs_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logs", "Print a task's output (stdout, then stderr)");
  struct Args {
    std::string run;
    std::string task;
    std::string state_dir;
    unsigned attempt = 0;
    bool only_out = false;
    bool only_err = false;
    std::string server;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id (or 'latest')")->required();
  cmd->add_option("task", a->task, "Task name, e.g. 'transform[part=3]'")->required();
  cmd->add_option("--attempt", a->attempt, "Which attempt (default: the latest)");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--stdout", a->only_out, "Only stdout");
  cmd->add_flag("--stderr", a->only_err, "Only stderr");
  cmd->add_option("--server", a->server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->callback([a] {
    if (auto server = chosen_server(a->server, a->state_dir)) {
      call_server(*server,
                  {{"op", "logs"},
                   {"run", a->run},
                   {"task", a->task},
                   {"attempt", a->attempt},
                   {"stdout", a->only_out},
                   {"stderr", a->only_err}},
                  false);
      return;
    }
    // The task's own output is copied byte for byte (not a result Output formats); what went
    // wrong goes through Output.
    const Output out = Output::for_command(false);
    auto [store, run_info] = open_run_or_exit(a->state_dir, a->run);
    const RunInfo* run = &run_info;
    auto state = replay_or_exit(*store, run_info);
    const TaskRecord* record = nullptr;
    std::vector<std::string> names;
    for (const auto& t : state.tasks) {
      if (t.name == a->task) record = &t;
      names.push_back(t.name);
    }
    if (record == nullptr) {
      out.error("run '" + run->id + "' has no started task '" + a->task + "'" +
                did_you_mean(a->task, names));
      throw CLI::RuntimeError(kExitBadInput);
    }
    unsigned attempt = a->attempt > 0 ? a->attempt : record->attempt;
    if (attempt == 0 || attempt > record->attempt) {
      out.error("task '" + record->name + "' has attempts 1 to " + std::to_string(record->attempt) +
                ", not " + std::to_string(attempt));
      throw CLI::RuntimeError(kExitBadInput);
    }
    std::string dir = run_log_dir(resolve_state_dir(a->state_dir), run->id);
    std::string out_path = log_path(dir, record->name, attempt, "out");
    std::string err_path = log_path(dir, record->name, attempt, "err");
    auto node_logs = read_node_logs(dir);
    std::string node;
    std::string node_dir;
    if (node_logs.ok()) {
      node = node_of(*store, run->id, record->task, attempt);
      auto it = node_logs->node_dirs.find(node);
      if (it != node_logs->node_dirs.end()) node_dir = it->second;
    }
    const bool live = effective_status(*run) == RunStatus::running;
    bool all_shown = true;
    std::string stayed;  // files left on the node of an ended run
    auto show = [&](const std::string& path, const std::string& stream, std::ostream& to) {
      // The shared file wins: output written there, or a failed attempt's output collected.
      if (copy_file(path, to) || node_dir.empty()) return;  // no file: empty output
      std::string file = path.substr(path.rfind('/') + 1);
      if (!live) {
        stayed += (stayed.empty() ? "" : ", ") + file;
        return;
      }
      all_shown &= fetch_node_local(out, record->name, attempt, stream, node, node_dir + "/" + file,
                                    node_logs->control_endpoint, to);
    };
    if (!a->only_err) show(out_path, "stdout", std::cout);
    if (!a->only_out) show(err_path, "stderr", std::cerr);
    if (!stayed.empty()) {
      bool elsewhere = run->status == RunStatus::running && run->host != host_name();
      out.error("task '" + record->name + "' attempt " + std::to_string(attempt) +
                ": its output stayed on node " + node + " in " + node_dir + "/ (" + stayed + ")" +
                (elsewhere
                     ? "; the run's coordinator runs on host " + run->host +
                           ": run chorus logs there to fetch it"
                     : "; the run has ended, so its agents are gone and chorus cannot fetch it "
                       "(only failed attempts' output is collected into the run folder): read "
                       "it on " +
                           node));
      all_shown = false;
    }
    if (!all_shown) throw CLI::RuntimeError(kExitError);
  });
}

const CommandRegistrar registrar{"logs", add_logs_command};

}  // namespace
}  // namespace chorus::cli
