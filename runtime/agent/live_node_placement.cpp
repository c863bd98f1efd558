#include "runtime/agent/live_node_placement.hpp"

namespace chorus {

PolicyRegistry with_live_node_placement(const PolicyRegistry& base, NodeAlive alive) {
  PolicyRegistry out = base;
  auto shared_base = std::make_shared<PolicyRegistry>(base);
  for (const std::string& name : base.placement_names()) {
    out.add_placement(name, [shared_base, name, alive]() -> std::unique_ptr<PlacementPolicy> {
      auto inner = shared_base->make_placement(name);
      if (!inner.ok()) return nullptr;
      return std::make_unique<LiveNodePlacement>(std::move(*inner), alive);
    });
  }
  return out;
}

}  // namespace chorus
