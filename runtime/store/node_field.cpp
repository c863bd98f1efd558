#include "runtime/store/node_field.hpp"

#include <charconv>

namespace chorus {

void append_node_field(std::string& out, std::string_view node, std::int64_t cores) {
  if (!out.empty()) out += ',';
  out += node;
  out += ':';
  out += std::to_string(cores);
}

std::vector<NodeCores> split_node_field(std::string_view field, int cores) {
  std::vector<NodeCores> out;
  if (field.empty()) return out;
  if (field.find(',') == std::string_view::npos && field.find(':') == std::string_view::npos) {
    out.push_back({std::string(field), cores});
    return out;
  }
  while (!field.empty()) {
    std::size_t comma = field.find(',');
    std::string_view part = field.substr(0, comma);
    field = comma == std::string_view::npos ? std::string_view{} : field.substr(comma + 1);
    if (part.empty()) continue;
    NodeCores n;
    std::size_t colon = part.rfind(':');
    n.node = std::string(part.substr(0, colon));
    if (colon != std::string_view::npos) {
      std::string_view count = part.substr(colon + 1);
      (void)std::from_chars(count.data(), count.data() + count.size(), n.cores);
    }
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace chorus
