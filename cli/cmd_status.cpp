// chorus status [RUN]: a run's state from the journal (default: the latest run).
// --nodes: the run's nodes, their capacities, what runs on each and what ran there.
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "cli/status_report.hpp"

namespace chorus::cli {
namespace {

void add_status_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "Show a run's progress from the journal");
  struct Args {
    std::string run = "latest";
    std::string state_dir;
    bool json = false;
    bool all = false;
    bool nodes = false;
    std::string server;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id, a unique prefix, or 'latest'")->default_str("latest");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->add_flag("--tasks", a->all, "List every task with its state");
  cmd->add_flag("--nodes", a->nodes,
                "List the run's nodes: capacity, what runs on each, attempts and failures there");
  cmd->add_option("--server", a->server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->callback([a] {
    if (auto server = chosen_server(a->server, a->state_dir)) {
      call_server(*server,
                  {{"op", "status"}, {"run", a->run}, {"tasks", a->all}, {"nodes", a->nodes}},
                  a->json);
      return;
    }
    const Output out = Output::for_command(a->json);
    auto [store, run] = open_run_or_exit(a->state_dir, a->run);
    auto state = replay_or_exit(*store, run);
    const RunStatusReport report = make_status_report(*store, run, state, a->all, a->nodes);
    out.run_status(report);
  });
}

const CommandRegistrar registrar{"status", add_status_command};

}  // namespace
}  // namespace chorus::cli
