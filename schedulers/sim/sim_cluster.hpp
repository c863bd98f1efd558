// SimCluster: the simulator's model of a cluster: nodes with a capacity (cores; memory and GPUs
// are not modelled, so every task asks for cores only).
#pragma once

#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/status.hpp"

namespace chorus::sim {

struct SimCluster {
  std::vector<NodeInfo> nodes;
  int total_cores() const;
  int largest_node_cores() const;
};

// "8x4" = 8 nodes of 4 cores; groups join with '+': "4x8+2x32".
// Errors: invalid_argument naming the bad group and showing the expected form.
Result<SimCluster> parse_cluster(std::string_view text);

}  // namespace chorus::sim
