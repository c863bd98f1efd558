#include "schedulers/queue/ujf_queue.hpp"

namespace chorus {

Result<std::unique_ptr<UjfQueue>> UjfQueue::create(PoolOptions options) {
  if (Status s = options.validate(); !s.ok()) return s;
  return std::make_unique<UjfQueue>(std::move(options));
}

std::vector<OptionSpec> UjfQueue::option_specs() {
  return pool_option_specs();
}

Result<std::unique_ptr<QueuePolicy>> UjfQueue::from_args(PolicyArgs& args) {
  auto q = create(pool_options(args));
  if (!q.ok()) return q.status();
  return std::unique_ptr<QueuePolicy>(std::move(*q));
}

}  // namespace chorus
