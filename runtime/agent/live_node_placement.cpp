#include "runtime/agent/live_node_placement.hpp"

namespace chorus {

PolicyRegistry with_live_node_placement(const PolicyRegistry& base, NodeAlive alive) {
  PolicyRegistry out = base;
  auto shared_base = std::make_shared<PolicyRegistry>(base);
  for (const std::string& name : base.placement_names()) {
    // The same options as the wrapped policy: the inner factory checks and reads them.
    out.add_placement(
        name, base.placement_options(name),
        [shared_base, name, alive](PolicyArgs& args) -> Result<std::unique_ptr<PlacementPolicy>> {
          auto inner = shared_base->make_placement(name, args.options(), args.context());
          if (!inner.ok()) return inner.status();
          return std::unique_ptr<PlacementPolicy>(
              std::make_unique<LiveNodePlacement>(std::move(*inner), alive));
        });
  }
  return out;
}

}  // namespace chorus
