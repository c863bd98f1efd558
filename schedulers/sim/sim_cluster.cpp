#include "schedulers/sim/sim_cluster.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace chorus::sim {

int SimCluster::total_cores() const {
  int n = 0;
  for (const auto& node : nodes) n += node.capacity.cores;
  return n;
}

int SimCluster::largest_node_cores() const {
  int n = 0;
  for (const auto& node : nodes) n = std::max(n, node.capacity.cores);
  return n;
}

Result<SimCluster> parse_cluster(std::string_view text) {
  SimCluster c;
  auto bad = [&](std::string_view group) {
    return invalid_argument("invalid cluster '" + std::string(text) + "': group '" +
                            std::string(group) +
                            "' is not NODESxCORES (e.g. 8x4, or 4x8+2x32), both positive");
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t plus = text.find('+', start);
    std::string_view group =
        text.substr(start, plus == std::string_view::npos ? text.npos : plus - start);
    std::size_t x = group.find('x');
    if (x == std::string_view::npos) return bad(group);
    int nodes = 0, cores = 0;
    auto a = std::from_chars(group.data(), group.data() + x, nodes);
    auto b = std::from_chars(group.data() + x + 1, group.data() + group.size(), cores);
    if (a.ec != std::errc{} || a.ptr != group.data() + x || b.ec != std::errc{} ||
        b.ptr != group.data() + group.size() || nodes <= 0 || cores <= 0 || nodes > 1000000) {
      return bad(group);
    }
    for (int i = 0; i < nodes; ++i) {
      c.nodes.push_back(NodeInfo{"node" + std::to_string(c.nodes.size()), Resources{cores, 0, 0}});
    }
    if (plus == std::string_view::npos) break;
    start = plus + 1;
  }
  return c;
}

}  // namespace chorus::sim
