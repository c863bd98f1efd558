// chorus logs RUN TASK: a task's stdout (to stdout) and stderr (to stderr), latest attempt.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/journal_access.hpp"
#include "cli/workflow_input.hpp"
#include "core/text.hpp"
#include "runtime/log_paths.hpp"

namespace chorus::cli {
namespace {

void copy_file(const std::string& path, std::ostream& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  out << in.rdbuf();
  out.flush();
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
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id (or 'latest')")->required();
  cmd->add_option("task", a->task, "Task name, e.g. 'transform[part=3]'")->required();
  cmd->add_option("--attempt", a->attempt, "Which attempt (default: the latest)");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--stdout", a->only_out, "Only stdout");
  cmd->add_flag("--stderr", a->only_err, "Only stderr");
  cmd->callback([a] {
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
      print_error("run '" + run->id + "' has no started task '" + a->task + "'" +
                  did_you_mean(a->task, names));
      throw CLI::RuntimeError(kExitBadInput);
    }
    unsigned attempt = a->attempt > 0 ? a->attempt : record->attempt;
    if (attempt == 0 || attempt > record->attempt) {
      print_error("task '" + record->name + "' has attempts 1 to " +
                  std::to_string(record->attempt) + ", not " + std::to_string(attempt));
      throw CLI::RuntimeError(kExitBadInput);
    }
    std::string dir = run_log_dir(resolve_state_dir(a->state_dir), run->id);
    std::string out = log_path(dir, record->name, attempt, "out");
    std::string err = log_path(dir, record->name, attempt, "err");
    // A stream the task never wrote to has no file: that is empty output, not an error.
    if (!a->only_err) copy_file(out, std::cout);
    if (!a->only_out) copy_file(err, std::cerr);
  });
}

const CommandRegistrar registrar{"logs", add_logs_command};

}  // namespace
}  // namespace chorus::cli
