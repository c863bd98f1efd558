#include "schedulers/queue/cfq_queue.hpp"

namespace chorus {

Result<std::unique_ptr<CfqQueue>> CfqQueue::create(FairQueueOptions options) {
  if (Status s = options.validate(); !s.ok()) return s;
  return std::make_unique<CfqQueue>(std::move(options));
}

std::vector<OptionSpec> CfqQueue::option_specs() {
  return fair_queue_option_specs();
}

Result<std::unique_ptr<QueuePolicy>> CfqQueue::from_args(PolicyArgs& args) {
  auto q = create(fair_queue_options(args, kDefaultGrace));
  if (!q.ok()) return q.status();
  return std::unique_ptr<QueuePolicy>(std::move(*q));
}

}  // namespace chorus
