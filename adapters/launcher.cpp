#include "adapters/launcher.hpp"

namespace chorus {

const char* to_string(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::exited:
      return "exited";
    case UpdateKind::timed_out:
      return "timed_out";
    case UpdateKind::cancelled:
      return "cancelled";
    case UpdateKind::lost:
      return "lost";
  }
  return "unknown";
}

}  // namespace chorus
