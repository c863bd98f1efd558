// The built-in policies. A new policy is one file pair and one line here; a policy with options
// names them (option_specs) and builds from them (from_args) in its own files, defaults included.
#include "schedulers/netaware/network_aware_policy.hpp"
#include "schedulers/netaware/network_cost_policy.hpp"
#include "schedulers/placement/balanced_allocation.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/placement/kube_default.hpp"
#include "schedulers/placement/least_allocated.hpp"
#include "schedulers/placement/random_placement.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/cfq_queue.hpp"
#include "schedulers/queue/fair_queue.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/queue/ujf_queue.hpp"
#include "schedulers/queue/uwfq_queue.hpp"
#include "schedulers/quorum/adasync_quorum.hpp"
#include "schedulers/quorum/dbw_plus.hpp"
#include "schedulers/quorum/dbw_quorum.hpp"
#include "schedulers/quorum/static_quorum.hpp"
#include "schedulers/quorum/wait_all.hpp"

namespace chorus {

void register_builtin_policies(PolicyRegistry& r) {
  r.add_queue("fifo", [] { return std::make_unique<FifoQueue>(); });
  r.add_queue("fair", FairQueue::option_specs(), FairQueue::from_args);
  r.add_queue("ujf", UjfQueue::option_specs(), UjfQueue::from_args);
  r.add_queue("cfq", CfqQueue::option_specs(), CfqQueue::from_args);
  r.add_queue("uwfq", UwfqQueue::option_specs(), UwfqQueue::from_args);
  r.add_placement("first-fit", [] { return std::make_unique<FirstFit>(); });
  r.add_placement("least-allocated", [] { return std::make_unique<LeastAllocated>(); });
  r.add_placement("balanced-allocation", [] { return std::make_unique<BalancedAllocation>(); });
  r.add_placement("kube-default", [] { return std::make_unique<KubeDefault>(); });
  r.add_placement("random", RandomPlacement::option_specs(), RandomPlacement::from_args);
  r.add_placement("network-aware", NetworkAwarePolicy::option_specs(),
                  NetworkAwarePolicy::from_args);
  r.add_placement("network-cost", NetworkCostPolicy::option_specs(), NetworkCostPolicy::from_args);
  r.add_quorum("wait-all", [] { return std::make_unique<WaitAllQuorum>(); });
  r.add_quorum("static", StaticQuorum::option_specs(), StaticQuorum::from_args);
  r.add_quorum("dbw", DbwQuorum::option_specs(), DbwQuorum::from_args);
  r.add_quorum("adasync", AdaSyncQuorum::option_specs(), AdaSyncQuorum::from_args);
  r.add_quorum("dbw+", DbwPlus::option_specs(), DbwPlus::from_args);
}

}  // namespace chorus
