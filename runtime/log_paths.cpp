#include "runtime/log_paths.hpp"

#include <cctype>

namespace chorus {

std::string log_path(std::string_view log_dir, std::string_view task_name, std::uint32_t attempt,
                     std::string_view stream) {
  std::string out;
  out.reserve(log_dir.size() + task_name.size() + 16);
  out.append(log_dir);
  out += '/';
  for (char c : task_name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
              c == '=' || c == ',' || c == '[' || c == ']';
    out += ok ? c : '_';
  }
  if (!task_name.empty() && task_name.front() == '.') out[log_dir.size() + 1] = '_';
  out += '.';
  out += std::to_string(attempt);
  out += '.';
  out.append(stream);
  return out;
}

}  // namespace chorus
