// UWFQ, user-weighted fair queuing (Kažemaks et al., arXiv 2510.15485): users share the cluster
// equally (or by weight) in a simulated fluid system, each user's jobs chain there (D_1 = S_u +
// R_1, D_k = D_{k-1} + R_k) in the order of a fair queue inside the user (jobs share the user's
// service by weight w_j), and the queued task whose job has the smallest virtual deadline runs
// next. A user who submits many jobs does not get more than a user who submits few, short jobs of
// a light user overtake a heavy user's backlog, and a user's short job overtakes its own long ones.
//
// Design assumptions: job work comes from a WorkEstimator (declared estimates by default); tasks
// are not preempted, so runtime partitioning (schedulers/sim/runtime_partitioning.hpp) keeps long
// jobs from blocking short ones. Weights are per user (`weights`) and per job within a user
// (`job_weights`); see VirtualFairQueue for the mechanics.
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
  // From a scheduler section: `weights` by user, `grace` (default kDefaultGrace); job weights
  // and history from the context (fair_queue_options).
  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<QueuePolicy>> from_args(PolicyArgs& args);
  static FairQueueOptions default_options();

  std::string_view name() const override { return "uwfq"; }
};

}  // namespace chorus
