// The built-in policies. A new policy is one file pair and one line here.
#include "schedulers/placement/balanced_allocation.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/placement/kube_default.hpp"
#include "schedulers/placement/least_allocated.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/cfq_queue.hpp"
#include "schedulers/queue/fair_queue.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/queue/ujf_queue.hpp"
#include "schedulers/queue/uwfq_queue.hpp"
#include "schedulers/queue/work_estimator.hpp"

namespace chorus {
namespace {

using QueueResult = Result<std::unique_ptr<QueuePolicy>>;

// Fair-share pools (Spark FAIR, UJF): user weights; no grace period.
template <typename Policy>
QueueResult with_pool_options(const QueueConfig& config) {
  if (config.grace) return invalid_argument("pool policies (fair, ujf) take no grace period");
  if (!config.job_weights.empty()) {
    return invalid_argument("pool policies (fair, ujf) take no job weights (uwfq and cfq do)");
  }
  if (config.history) return invalid_argument("pool policies (fair, ujf) take no work history");
  PoolOptions o;
  o.weights = config.weights;
  auto q = Policy::create(std::move(o));
  if (!q.ok()) return q.status();
  return std::unique_ptr<QueuePolicy>(std::move(*q));
}

// Virtual-time fair queuing (CFQ, UWFQ): user weights and the grace period.
template <typename Policy, Duration::rep kDefaultGraceTicks>
QueueResult with_fair_options(const QueueConfig& config) {
  FairQueueOptions o;
  o.weights = config.weights;
  o.grace = config.grace.value_or(Duration(kDefaultGraceTicks));
  o.job_weights = config.job_weights;
  if (config.history) {
    auto history = std::make_unique<HistoryWork>();
    for (const auto& [job_class, seconds] : *config.history)
      history->add_sample(job_class, seconds);
    o.estimator = std::move(history);
  }
  auto q = Policy::create(std::move(o));
  if (!q.ok()) return q.status();
  return std::unique_ptr<QueuePolicy>(std::move(*q));
}

}  // namespace

void register_builtin_policies(PolicyRegistry& r) {
  r.add_queue("fifo", [] { return std::make_unique<FifoQueue>(); });
  r.add_queue("fair", with_pool_options<FairQueue>);
  r.add_queue("ujf", with_pool_options<UjfQueue>);
  r.add_queue("cfq", with_fair_options<CfqQueue, Duration::zero().count()>);
  r.add_queue("uwfq", with_fair_options<UwfqQueue, UwfqQueue::kDefaultGrace.count()>);
  r.add_placement("first-fit", [] { return std::make_unique<FirstFit>(); });
  r.add_placement("least-allocated", [] { return std::make_unique<LeastAllocated>(); });
  r.add_placement("balanced-allocation", [] { return std::make_unique<BalancedAllocation>(); });
  r.add_placement("kube-default", [] { return std::make_unique<KubeDefault>(); });
}

}  // namespace chorus
