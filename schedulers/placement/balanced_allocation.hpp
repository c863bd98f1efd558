// balanced-allocation: keeps each node's resources used in step, as Kubernetes' default
// scheduler scores nodes (NodeResourcesBalancedAllocation): the node whose requested fractions
// (held after placement / capacity, capped at 1) are closest to each other wins, so no node runs
// out of cores while its memory sits idle, or the other way round.
//
// score = 1 - std, over the fractions of the resources counted: cores; memory when the node's
// memory is known (capacity > 0); GPUs when the task asks for them and the node has some. As in
// Kubernetes: two fractions give std = |f1 - f2| / 2, more the population standard deviation, one
// (a memory-less node, as in the simulator) 0, so every such node scores 1 and the first node
// with room wins, as first-fit. Scores are exact (Kubernetes rounds to 0..100); ties go to the
// first node.
#pragma once

#include "schedulers/policy.hpp"

namespace chorus {

// The score above, in [0, 1] (also kube-default's second half).
double balanced_allocation_score(const TaskSpec& task, const NodeView& node);

class BalancedAllocation final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "balanced-allocation"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec& task, const NodeView& node) const override {
    return balanced_allocation_score(task, node);
  }
};

}  // namespace chorus
