// The built-in policies. A new policy is one file pair and one line here.
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/cfq_queue.hpp"
#include "schedulers/queue/fair_queue.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/queue/ujf_queue.hpp"
#include "schedulers/queue/uwfq_queue.hpp"

namespace chorus {

void register_builtin_policies(PolicyRegistry& r) {
  r.add_queue("fifo", [] { return std::make_unique<FifoQueue>(); });
  r.add_queue("fair", [] { return std::make_unique<FairQueue>(); });
  r.add_queue("ujf", [] { return std::make_unique<UjfQueue>(); });
  r.add_queue("cfq", [] { return std::make_unique<CfqQueue>(); });
  r.add_queue("uwfq", [] { return std::make_unique<UwfqQueue>(); });
  r.add_placement("first-fit", [] { return std::make_unique<FirstFit>(); });
}

}  // namespace chorus
