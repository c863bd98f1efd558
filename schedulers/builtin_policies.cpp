// The built-in policies. A new policy is one file pair and one line here.
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/fifo_queue.hpp"

namespace chorus {

void register_builtin_policies(PolicyRegistry& r) {
  r.add_queue("fifo", [] { return std::make_unique<FifoQueue>(); });
  r.add_placement("first-fit", [] { return std::make_unique<FirstFit>(); });
}

}  // namespace chorus
