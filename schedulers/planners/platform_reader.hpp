// Reads a platform description (YAML):
//
//   name: paper5
//   machine_types:
//     - {name: m1.00, speed: 1.0, cores: 8, count: 4, price: 1.0}
//
// Errors: unreadable file (io_error), bad YAML (path:line:col), unknown keys (with a suggestion),
// and everything validate_platform() rejects.
#pragma once

#include <string>
#include <string_view>

#include "core/status.hpp"
#include "schedulers/planners/platform.hpp"

namespace chorus {

Result<Platform> read_platform_file(const std::string& path);
// `path` names the text in messages.
Result<Platform> parse_platform(std::string_view yaml_text, const std::string& path);

}  // namespace chorus
