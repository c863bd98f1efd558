#include "adapters/slurm/cpus_per_node.hpp"

#include <charconv>
#include <string>

namespace chorus {
namespace {

Status bad(std::string_view text, const std::string& why) {
  return invalid_argument("bad CPU list '" + std::string(text) + "': " + why);
}

bool parse_positive(std::string_view s, long& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && out > 0;
}

}  // namespace

Result<std::vector<int>> parse_cpus_per_node(std::string_view text, std::size_t max_nodes) {
  if (text.empty()) return bad(text, "it is empty");
  std::vector<int> cpus;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    if (item.empty()) return bad(text, "empty item");
    std::string_view count_text = item;
    long repeat = 1;
    if (std::size_t paren = item.find('('); paren != std::string_view::npos) {
      count_text = item.substr(0, paren);
      std::string_view suffix = item.substr(paren);
      if (suffix.size() < 4 || suffix.substr(0, 2) != "(x" || suffix.back() != ')' ||
          !parse_positive(suffix.substr(2, suffix.size() - 3), repeat)) {
        return bad(text, "'" + std::string(item) + "' should read N(xR), e.g. 4(x3)");
      }
    }
    long count = 0;
    if (!parse_positive(count_text, count) || count > 1'000'000) {
      return bad(text, "'" + std::string(count_text) + "' is not a positive CPU count");
    }
    if (static_cast<std::size_t>(repeat) > max_nodes - cpus.size()) {
      return bad(text, "more than " + std::to_string(max_nodes) + " nodes");
    }
    cpus.insert(cpus.end(), static_cast<std::size_t>(repeat), static_cast<int>(count));
    start = comma + 1;
  }
  return cpus;
}

}  // namespace chorus
