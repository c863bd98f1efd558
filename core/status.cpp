#include "core/status.hpp"

namespace chorus {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::ok:
      return "ok";
    case ErrorCode::invalid_argument:
      return "invalid argument";
    case ErrorCode::not_found:
      return "not found";
    case ErrorCode::unavailable:
      return "unavailable";
    case ErrorCode::unsatisfiable:
      return "unsatisfiable";
    case ErrorCode::io_error:
      return "I/O error";
    case ErrorCode::cancelled:
      return "cancelled";
    case ErrorCode::internal:
      return "internal error";
  }
  return "unknown";
}

}  // namespace chorus
