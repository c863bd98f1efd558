// Shared plumbing of the commands that read the journal (status, list, logs, cancel).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/store/state_store.hpp"

namespace chorus::cli {

// Opens <state>/chorus.db; a missing journal is a clear error, not an empty one created on read.
Result<std::unique_ptr<StateStore>> open_journal(const std::string& state_dir_option);

// Opens the journal and finds `run_id` in it. On failure prints the error and throws
// CLI::RuntimeError with exit status 2 (bad input), as every subcommand does.
struct OpenedRun {
  std::unique_ptr<StateStore> store;
  RunInfo run;
};
OpenedRun open_run_or_exit(const std::string& state_dir_option, const std::string& run_id);
// Replays a run; on failure prints and throws CLI::RuntimeError(3).
RunState replay_or_exit(StateStore& store, const RunInfo& run);
// A run's events in journal order; on failure prints and throws CLI::RuntimeError(3).
std::vector<EventRecord> events_or_exit(StateStore& store, const RunInfo& run);

// "running", or "interrupted" when the run says running but its coordinator is gone.
RunStatus effective_status(const RunInfo& run);

}  // namespace chorus::cli
