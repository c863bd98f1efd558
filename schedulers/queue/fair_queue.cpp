#include "schedulers/queue/fair_queue.hpp"

namespace chorus {

Result<std::unique_ptr<FairQueue>> FairQueue::create(PoolOptions options) {
  if (Status s = options.validate(); !s.ok()) return s;
  return std::make_unique<FairQueue>(std::move(options));
}

}  // namespace chorus
