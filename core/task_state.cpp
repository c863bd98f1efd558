#include "core/task_state.hpp"

namespace chorus {

const char* to_string(TaskState s) {
  switch (s) {
    case TaskState::pending:
      return "pending";
    case TaskState::ready:
      return "ready";
    case TaskState::running:
      return "running";
    case TaskState::succeeded:
      return "succeeded";
    case TaskState::failed:
      return "failed";
    case TaskState::cancelled:
      return "cancelled";
    case TaskState::timed_out:
      return "timed_out";
  }
  return "unknown";
}

std::optional<TaskState> parse_task_state(std::string_view text) {
  for (auto s : {TaskState::pending, TaskState::ready, TaskState::running, TaskState::succeeded,
                 TaskState::failed, TaskState::cancelled, TaskState::timed_out}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

bool is_valid_transition(TaskState from, TaskState to) {
  using S = TaskState;
  switch (from) {
    case S::pending:
      return to == S::ready || to == S::cancelled || to == S::failed;
    case S::ready:
      return to == S::running || to == S::cancelled || to == S::failed;
    case S::running:
      return to == S::succeeded || to == S::failed || to == S::timed_out || to == S::cancelled;
    case S::failed:
    case S::timed_out:
      return to == S::ready || to == S::pending;
    case S::succeeded:
    case S::cancelled:
      return false;
  }
  return false;
}

}  // namespace chorus
