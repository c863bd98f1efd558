// chorus list: the runs in the journal, newest last.
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"

namespace chorus::cli {
namespace {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the runs in the journal");
  auto state_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto server = std::make_shared<std::string>();
  cmd->add_option("--server", *server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->add_option("--state", *state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", *json, "Print a JSON array");
  cmd->callback([state_dir, json, server] {
    if (auto chosen = chosen_server(*server, *state_dir)) {
      call_server(*chosen, {{"op", "list"}}, *json);
      return;
    }
    const Output out = Output::for_command(*json);
    auto store = open_journal(*state_dir);
    if (!store.ok()) {
      out.error(store.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    auto runs = (*store)->list_runs();
    if (!runs.ok()) {
      out.error(runs.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    for (auto& r : *runs) r.status = effective_status(r);
    out.run_list(*runs);
  });
}

const CommandRegistrar registrar{"list", add_list_command};

}  // namespace
}  // namespace chorus::cli
