#include "workflows/diagnostic.hpp"

namespace chorus {

std::string Diagnostic::format() const {
  std::string out = path;
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (column > 0) out += ':' + std::to_string(column);
  }
  if (!out.empty()) out += ": ";
  return out + message;
}

}  // namespace chorus
