// UWFQ, user-weighted fair queuing (Kažemaks et al., arXiv 2510.15485): users share the cluster
// equally (or by weight) in a simulated fluid system, each user's jobs chain in arrival order
// there (D_1 = S_u + R_1, D_k = D_{k-1} + R_k), and the queued task whose job has the smallest
// virtual deadline runs next. A user who submits many jobs does not get more than a user who
// submits few, and short jobs of a light user overtake a heavy user's backlog.
//
// Design assumptions: job work comes from a WorkEstimator (declared estimates by default); tasks
// are not preempted, so runtime partitioning (schedulers/sim/runtime_partitioning.hpp) keeps long
// jobs from blocking short ones. Weights are per user; see VirtualFairQueue for the mechanics.
#pragma once

#include "schedulers/queue/virtual_fair_queue.hpp"

namespace chorus {

class UwfqQueue final : public VirtualFairQueue {
 public:
  // A retired user back within this keeps its place in the chain.
  static constexpr Duration kDefaultGrace = std::chrono::seconds(1);

  UwfqQueue() : UwfqQueue(default_options()) {}
  // `options.weights` are by user name; `options` must be valid.
  explicit UwfqQueue(FairQueueOptions options)
      : VirtualFairQueue(FlowKind::user, std::move(options)) {}

  // Validates the options first (negative weights and the like are reported, not asserted).
  static Result<std::unique_ptr<UwfqQueue>> create(FairQueueOptions options);
  static FairQueueOptions default_options();

  std::string_view name() const override { return "uwfq"; }
};

}  // namespace chorus
