#include "schedulers/queue/uwfq_queue.hpp"

namespace chorus {

FairQueueOptions UwfqQueue::default_options() {
  FairQueueOptions o;
  o.grace = kDefaultGrace;
  return o;
}

Result<std::unique_ptr<UwfqQueue>> UwfqQueue::create(FairQueueOptions options) {
  if (Status s = options.validate(); !s.ok()) return s;
  return std::make_unique<UwfqQueue>(std::move(options));
}

}  // namespace chorus
