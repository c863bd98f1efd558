// Where a task attempt's output goes: <log_dir>/<task name>.<attempt>.<out|err>, the name made
// safe for a file name (characters other than letters, digits and . _ - = , [ ] become '_').
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chorus {

std::string log_path(std::string_view log_dir, std::string_view task_name, std::uint32_t attempt,
                     std::string_view stream);

}  // namespace chorus
