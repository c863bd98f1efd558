// Exit statuses of the chorus command. README.md and cli/README.md list them: keep all three true.
#pragma once

#include "core/thread_guard.hpp"

namespace chorus::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitTasksFailed = 1;  // some task failed (the run itself ended)
inline constexpr int kExitBadInput = 2;     // bad input or usage
inline constexpr int kExitError = 3;        // an internal or I/O error, out of memory included
inline constexpr int kExitCancelled = 130;  // Ctrl-C, SIGTERM, `chorus cancel`

// A thread of ours that lets an exception escape exits the same way as main does.
static_assert(kExitError == kExitThreadException);

}  // namespace chorus::cli
