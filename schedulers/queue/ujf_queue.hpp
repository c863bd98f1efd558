// UJF, user job fairness: a FIFO pool per user, pools shared fairly (the pool with the fewest
// running cores per unit of weight goes next; minShare is ignored). Equal between users, but
// inside a user a short job waits for that user's earlier jobs. Mechanics: PoolQueue.
#pragma once

#include <memory>

#include "schedulers/queue/pool_queue.hpp"

namespace chorus {

class UjfQueue final : public PoolQueue {
 public:
  UjfQueue() : UjfQueue(PoolOptions{}) {}
  // `options` must be valid; min_shares are ignored.
  explicit UjfQueue(PoolOptions options)
      : PoolQueue(WithinPool::fifo, without_min_shares(std::move(options))) {}
  static Result<std::unique_ptr<UjfQueue>> create(PoolOptions options);
  // From a scheduler section: `weights` by user (pool_options).
  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<QueuePolicy>> from_args(PolicyArgs& args);
  std::string_view name() const override { return "ujf"; }

 private:
  static PoolOptions without_min_shares(PoolOptions o) {
    o.min_shares.clear();
    return o;
  }
};

}  // namespace chorus
