// CFQ, fair queuing over jobs: every job is a flow of its own, so V advances at C / active jobs
// and a job's deadline is V at its submission + its work (weights, when given, are by job name).
// Fair between jobs, hence unfair between users: a user with many jobs gets more of the cluster.
// The baseline UWFQ improves on; the mechanics are VirtualFairQueue's.
#pragma once

#include "schedulers/queue/virtual_fair_queue.hpp"

namespace chorus {

class CfqQueue final : public VirtualFairQueue {
 public:
  // A retired job back within this keeps its place.
  static constexpr Duration kDefaultGrace = Duration::zero();

  CfqQueue() : CfqQueue(FairQueueOptions{}) {}
  // `options.weights` are by job name; `options` must be valid.
  explicit CfqQueue(FairQueueOptions options)
      : VirtualFairQueue(FlowKind::job, std::move(options)) {}

  static Result<std::unique_ptr<CfqQueue>> create(FairQueueOptions options);
  // From a scheduler section: `weights`, `grace` (default kDefaultGrace); job weights (its
  // flows' weights) and history from the context (fair_queue_options).
  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<QueuePolicy>> from_args(PolicyArgs& args);

  std::string_view name() const override { return "cfq"; }
};

}  // namespace chorus
