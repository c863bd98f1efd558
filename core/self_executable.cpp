#include "core/self_executable.hpp"

#include <filesystem>

namespace chorus {

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("chorus") : p.string();
}

}  // namespace chorus
