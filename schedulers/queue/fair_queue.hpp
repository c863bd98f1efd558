// FAIR, after Spark's fair scheduler: a pool per user with a weight and a minShare (cores);
// needy pools (running < minShare) first, then by running / minShare, then by running / weight;
// inside a pool, jobs share fairly (fewest running cores first). Fair between users' pools as
// long as every pool is busy, but blind to how long queued work takes: a short job waits behind
// whatever tasks its turn order puts first. Mechanics: PoolQueue.
#pragma once

#include <memory>

#include "schedulers/queue/pool_queue.hpp"

namespace chorus {

class FairQueue final : public PoolQueue {
 public:
  FairQueue() : FairQueue(PoolOptions{}) {}
  // `options` must be valid.
  explicit FairQueue(PoolOptions options) : PoolQueue(WithinPool::fair, std::move(options)) {}
  static Result<std::unique_ptr<FairQueue>> create(PoolOptions options);
  // From a scheduler section: `weights` by user (pool_options).
  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<QueuePolicy>> from_args(PolicyArgs& args);
  std::string_view name() const override { return "fair"; }
};

}  // namespace chorus
