#include "schedulers/queue/ujf_queue.hpp"

namespace chorus {

Result<std::unique_ptr<UjfQueue>> UjfQueue::create(PoolOptions options) {
  if (Status s = options.validate(); !s.ok()) return s;
  return std::make_unique<UjfQueue>(std::move(options));
}

}  // namespace chorus
