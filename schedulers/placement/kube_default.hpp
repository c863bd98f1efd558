// kube-default: the node scoring of kube-scheduler's default profile, least-allocated and
// balanced-allocation weighed equally (NodeResourcesFit with the LeastAllocated strategy and
// NodeResourcesBalancedAllocation, weight 1 each): score = the mean of the two scores, in [0, 1].
// Filtering and ties as the two (fits by resources; ties to the first node).
#pragma once

#include "schedulers/placement/balanced_allocation.hpp"
#include "schedulers/placement/least_allocated.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

class KubeDefault final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "kube-default"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec& task, const NodeView& node) const override {
    return (least_allocated_score(task, node) + balanced_allocation_score(task, node)) / 2;
  }
};

}  // namespace chorus
