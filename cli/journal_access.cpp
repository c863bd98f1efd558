#include "cli/journal_access.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>

#include "api/run_workflow.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"

namespace chorus::cli {

Result<std::unique_ptr<StateStore>> open_journal(const std::string& state_dir_option) {
  std::string dir = resolve_state_dir(state_dir_option);
  std::string path = journal_path(dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return not_found("no Chorus journal at " + path +
                     " (run `chorus run wf.yaml` here first, or pass --state DIR)");
  }
  return open_sqlite_store(path);
}

OpenedRun open_run_or_exit(const std::string& state_dir_option, const std::string& run_id) {
  auto store = open_journal(state_dir_option);
  if (!store.ok()) {
    print_error(store.status().message());
    throw CLI::RuntimeError(kExitBadInput);
  }
  auto run = (*store)->find_run(run_id);
  if (!run.ok()) {
    print_error(run.status().message());
    throw CLI::RuntimeError(kExitBadInput);
  }
  return {std::move(*store), std::move(*run)};
}

RunState replay_or_exit(StateStore& store, const RunInfo& run) {
  auto state = store.replay(run.id);
  if (!state.ok()) {
    print_error(state.status().message());
    throw CLI::RuntimeError(kExitError);
  }
  return std::move(*state);
}

std::vector<EventRecord> events_or_exit(StateStore& store, const RunInfo& run) {
  auto events = store.events(run.id);
  if (!events.ok()) {
    print_error(events.status().message());
    throw CLI::RuntimeError(kExitError);
  }
  return std::move(*events);
}

RunStatus effective_status(const RunInfo& run) {
  if (run.status == RunStatus::running && !coordinator_alive(run)) return RunStatus::interrupted;
  return run.status;
}

}  // namespace chorus::cli
