#include "runtime/agent/live_node_placement.hpp"

namespace chorus {

std::unique_ptr<PlacementPolicy> live_nodes_only(std::unique_ptr<PlacementPolicy> inner,
                                                 NodeAlive alive) {
  return usable_nodes_only(std::move(inner),
                           [alive = std::move(alive)](const TaskSpec&, const NodeView& node) {
                             return alive(node.info->name);
                           });
}

std::unique_ptr<PlacementPolicy> usable_nodes_only(std::unique_ptr<PlacementPolicy> inner,
                                                   NodeUsable usable) {
  if (inner == nullptr) return inner;
  return std::make_unique<LiveNodePlacement>(std::move(inner), std::move(usable));
}

}  // namespace chorus
