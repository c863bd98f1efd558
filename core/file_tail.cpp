#include "core/file_tail.hpp"

#include <algorithm>
#include <fstream>

namespace chorus {

std::string file_tail(const std::string& path, int max_lines) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  // Walk back over `max_lines` newlines; the tail starts after the last one found.
  std::size_t start = text.size();
  for (int n = 0; n < max_lines && start > 0; ++n) {
    std::size_t nl = text.rfind('\n', start - 1);
    if (nl == std::string::npos) {
      start = 0;
      break;
    }
    start = nl;
  }
  return start == 0 ? text : text.substr(start + 1);
}

}  // namespace chorus
