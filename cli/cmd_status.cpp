// chorus status [RUN]: a run's state from the journal (default: the latest run).
// --nodes: the run's nodes, their capacities, what runs on each and what ran there.
// --watch: the status again every --interval until the run ends (the terminal is redrawn; plain
// and JSON output print each snapshot), then the run's outcome as the exit status.
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "cli/status_report.hpp"

namespace chorus::cli {
namespace {

// The exit status of `status --watch` once the run ended as `s`.
int watch_exit(RunStatus s) {
  switch (s) {
    case RunStatus::succeeded:
      return kExitOk;
    case RunStatus::failed:
      return kExitTasksFailed;
    case RunStatus::cancelled:
      return kExitCancelled;
    default:
      return kExitError;  // interrupted: its coordinator is gone (chorus run --resume)
  }
}

// Before each snapshot after the first: the terminal is redrawn, plain output gets a separator.
void between_snapshots(OutputMode mode) {
  if (mode == OutputMode::terminal) {
    std::fputs("\033[H\033[2J", stdout);
  } else if (mode == OutputMode::plain) {
    std::fputs("\n", stdout);
  }
  std::fflush(stdout);
}

void add_status_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "Show a run's progress from the journal");
  struct Args {
    std::string run = "latest";
    std::string state_dir;
    bool json = false;
    bool all = false;
    bool nodes = false;
    std::string server;
    bool watch = false;
    double interval = 2;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id, a unique prefix, or 'latest'")->default_str("latest");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->add_flag("--tasks", a->all, "List every task with its state");
  cmd->add_flag("--nodes", a->nodes,
                "List the run's nodes: capacity, what runs on each, attempts and failures there");
  cmd->add_option("--server", a->server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->add_flag("--watch", a->watch,
                "Show the status again every --interval until the run ends; exit with its outcome "
                "(0 succeeded, 1 failed, 130 cancelled, 3 interrupted)");
  cmd->add_option("--interval", a->interval, "Seconds between snapshots of --watch")
      ->default_str("2")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->callback([a] {
    const auto pause = std::chrono::duration<double>(a->interval);
    const OutputMode mode = pick_output_mode(a->json);
    if (auto server = chosen_server(a->server, a->state_dir)) {
      nlohmann::json request{
          {"op", "status"}, {"run", a->run}, {"tasks", a->all}, {"nodes", a->nodes}};
      for (bool first = true;; first = false) {
        if (!first) between_snapshots(mode);
        nlohmann::json reply = call_server(*server, request, a->json);
        if (!a->watch) return;
        auto ended = parse_run_status(reply.value("run_status", ""));
        if (ended && *ended != RunStatus::running) {
          if (const int code = watch_exit(*ended); code != 0) throw CLI::RuntimeError(code);
          return;
        }
        request["run"] = reply.value("run", a->run);  // "latest" stays the run it was
        std::this_thread::sleep_for(pause);
      }
    }
    const Output out = Output::for_command(a->json);
    auto [store, run] = open_run_or_exit(a->state_dir, a->run);
    for (bool first = true;; first = false) {
      if (!first) {
        std::this_thread::sleep_for(pause);
        between_snapshots(mode);
        if (auto again = store->find_run(run.id); again.ok()) run = std::move(*again);
      }
      auto state = replay_or_exit(*store, run);
      const RunStatusReport report = make_status_report(*store, run, state, a->all, a->nodes);
      out.run_status(report);
      if (!a->watch) return;
      if (const RunStatus now = effective_status(run); now != RunStatus::running) {
        if (const int code = watch_exit(now); code != 0) throw CLI::RuntimeError(code);
        return;
      }
    }
  });
}

const CommandRegistrar registrar{"status", add_status_command};

}  // namespace
}  // namespace chorus::cli
