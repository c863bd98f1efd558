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

std::vector<OptionSpec> UwfqQueue::option_specs() {
  return fair_queue_option_specs();
}

Result<std::unique_ptr<QueuePolicy>> UwfqQueue::from_args(PolicyArgs& args) {
  auto q = create(fair_queue_options(args, kDefaultGrace));
  if (!q.ok()) return q.status();
  return std::unique_ptr<QueuePolicy>(std::move(*q));
}

}  // namespace chorus
