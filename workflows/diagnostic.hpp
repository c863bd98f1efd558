// Diagnostic: an error a user can act on, pointing into a workflow file.
#pragma once

#include <string>

#include "core/status.hpp"

namespace chorus {

struct Diagnostic {
  std::string path;  // the file as the user named it
  int line = 0;      // 1-based; 0 = the file as a whole
  int column = 0;    // 1-based; 0 = the line as a whole
  std::string message;

  // "path:line:col: message" (parts that are 0 are left out).
  std::string format() const;
  // An invalid_argument Status carrying format().
  Status to_status() const { return invalid_argument(format()); }
};

}  // namespace chorus
