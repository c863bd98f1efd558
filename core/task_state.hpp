// The task state machine.
//
//   pending -> ready -> running -> succeeded
//                          |  \--> failed | timed_out --(retries left)--> ready
//                          \-----> cancelled
//   pending | ready -> cancelled   (run cancelled, or a dependency did not succeed)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chorus {

enum class TaskState : std::uint8_t {
  pending,  // waiting for dependencies
  ready,    // dependencies done, waiting for the scheduler
  running,  // handed to a launcher (journaled before the launch)
  succeeded,
  failed,
  cancelled,
  timed_out,
};

const char* to_string(TaskState s);
std::optional<TaskState> parse_task_state(std::string_view text);

inline bool is_terminal(TaskState s) {
  return s == TaskState::succeeded || s == TaskState::failed || s == TaskState::cancelled ||
         s == TaskState::timed_out;
}

// Whether the state machine above allows from -> to. Retrying is failed/timed_out -> ready.
bool is_valid_transition(TaskState from, TaskState to);

}  // namespace chorus
