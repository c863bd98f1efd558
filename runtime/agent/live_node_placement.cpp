#include "runtime/agent/live_node_placement.hpp"

namespace chorus {

std::unique_ptr<PlacementPolicy> live_nodes_only(std::unique_ptr<PlacementPolicy> inner,
                                                 NodeAlive alive) {
  if (inner == nullptr) return inner;
  return std::make_unique<LiveNodePlacement>(std::move(inner), std::move(alive));
}

}  // namespace chorus
