// least-allocated: spreads work, as Kubernetes' default scheduler scores nodes
// (NodeResourcesLeastAllocated, the LeastAllocated strategy of NodeResourcesFit): the node that
// keeps the most of its capacity free after taking the task wins.
//
// score = mean over the resources, r, of free_r after placement / capacity_r, each clamped to
// [0, 1]: cores always; memory when the node's memory is known (capacity > 0); GPUs when the task
// asks for them and the node has some. Kubernetes weighs cpu and memory 1 each and scores 0 for a
// resource the node has none of; here a memory-less node (memory not tracked, as in the simulator)
// is scored on its cores alone, so it is not penalised for what nobody counts. Scores are exact
// (Kubernetes rounds them to 0..100); ties go to the first node (Kubernetes picks one at random).
#pragma once

#include "schedulers/policy.hpp"

namespace chorus {

// The score above, in [0, 1] (also kube-default's first half).
double least_allocated_score(const TaskSpec& task, const NodeView& node);

class LeastAllocated final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "least-allocated"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec& task, const NodeView& node) const override {
    return least_allocated_score(task, node);
  }
};

}  // namespace chorus
