#include "schedulers/queue/cfq_queue.hpp"

namespace chorus {

Result<std::unique_ptr<CfqQueue>> CfqQueue::create(FairQueueOptions options) {
  if (Status s = options.validate(); !s.ok()) return s;
  return std::make_unique<CfqQueue>(std::move(options));
}

}  // namespace chorus
