// First-fit: the first node (in the cluster's order) with enough free resources. Packs work onto
// few nodes, which keeps whole nodes free for wide (MPI) tasks.
#pragma once

#include "schedulers/policy.hpp"

namespace chorus {

class FirstFit final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "first-fit"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  // Constant: the coordinator keeps the first of equal scores.
  double score(const TaskSpec& /*task*/, const NodeView& /*node*/) const override { return 0; }
};

}  // namespace chorus
