// chorus list: the runs in the journal, newest last.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/journal_access.hpp"
#include "cli/json_text.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the runs in the journal");
  auto state_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--state", *state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", *json, "Print a JSON array");
  cmd->callback([state_dir, json] {
    auto store = open_journal(*state_dir);
    if (!store.ok()) {
      print_error(store.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    auto runs = (*store)->list_runs();
    if (!runs.ok()) {
      print_error(runs.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    if (*json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : *runs) {
        j.push_back({{"run", r.id},
                     {"status", to_string(effective_status(r))},
                     {"tasks", r.total_tasks},
                     {"created", r.created},
                     {"file", r.workflow_path}});
      }
      std::printf("%s\n", json_text(j, 2).c_str());
      return;
    }
    std::printf("%-28s %-12s %8s  %-19s  %s\n", "RUN", "STATUS", "TASKS", "STARTED", "FILE");
    for (const auto& r : *runs) {
      std::printf("%-28s %-12s %8lld  %-19s  %s\n", r.id.c_str(), to_string(effective_status(r)),
                  static_cast<long long>(r.total_tasks), format_time(r.created).c_str(),
                  r.workflow_path.c_str());
    }
  });
}

const CommandRegistrar registrar{"list", add_list_command};

}  // namespace
}  // namespace chorus::cli
