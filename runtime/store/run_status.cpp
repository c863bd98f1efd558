#include "runtime/store/state_store.hpp"

namespace chorus {

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::running:
      return "running";
    case RunStatus::succeeded:
      return "succeeded";
    case RunStatus::failed:
      return "failed";
    case RunStatus::cancelled:
      return "cancelled";
    case RunStatus::interrupted:
      return "interrupted";
  }
  return "unknown";
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (auto s : {RunStatus::running, RunStatus::succeeded, RunStatus::failed, RunStatus::cancelled,
                 RunStatus::interrupted}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

}  // namespace chorus
