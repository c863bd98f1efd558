// Shared plumbing of the commands that read the journal (status, list, logs, cancel).
#pragma once

#include <memory>
#include <string>

#include "runtime/store/state_store.hpp"

namespace chorus::cli {

// Opens <state>/chorus.db; a missing journal is a clear error, not an empty one created on read.
Result<std::unique_ptr<StateStore>> open_journal(const std::string& state_dir_option);

// "running", or "interrupted" when the run says running but its coordinator is gone.
RunStatus effective_status(const RunInfo& run);

// "2026-11-30 08:45:12" (local time).
std::string format_time(double wall_seconds);

}  // namespace chorus::cli
