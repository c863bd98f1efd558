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

}  // namespace chorus
