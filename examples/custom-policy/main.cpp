// A custom queue policy, registered under a name and compared with the built-in ones in the
// simulator. Usage: custom_policy [MIX] [SEED]   (MIX as for `chorus simulate --workload gen:MIX`)
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/sim/metrics.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_generator.hpp"

namespace {

// Shortest declared estimate first: great for mean response, unfair to long jobs.
class ShortestFirst final : public chorus::QueuePolicy {
 public:
  std::string_view name() const override { return "shortest-first"; }
  void on_ready(const chorus::TaskSpec& t, chorus::TimePoint) override {
    if (t.id >= key_.size()) key_.resize(t.id + 1);
    key_[t.id] = {t.estimate, t.id};
    queue_.insert(key_[t.id]);
  }
  std::optional<chorus::TaskId> next(const chorus::ClusterView&) override {
    if (queue_.empty()) return std::nullopt;
    return queue_.begin()->second;
  }
  void on_start(const chorus::TaskSpec& t, chorus::TimePoint) override { remove(t.id); }
  void remove(chorus::TaskId id) override {
    if (id < key_.size()) queue_.erase(key_[id]);
  }
  std::size_t size() const override { return queue_.size(); }

 private:
  std::set<std::pair<chorus::Duration, chorus::TaskId>> queue_;
  std::vector<std::pair<chorus::Duration, chorus::TaskId>> key_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string mix = argc > 1 ? argv[1] : "2large2small";
  std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;

  auto registry = chorus::PolicyRegistry::with_builtins();
  registry.add_queue("shortest-first", [] { return std::make_unique<ShortestFirst>(); });

  auto workload = chorus::sim::generate_workload(mix, seed);
  auto cluster = chorus::sim::parse_cluster("8x4");
  if (!workload.ok() || !cluster.ok()) {
    std::fprintf(stderr, "custom_policy: %s\n",
                 (workload.ok() ? cluster.status() : workload.status()).message().c_str());
    return 2;
  }
  std::printf("%-15s %12s %12s %8s\n", "policy", "small mean", "large mean", "jain");
  for (const char* name : {"fifo", "uwfq", "shortest-first"}) {
    auto queue = registry.make_queue(name);
    chorus::FirstFit placement;
    auto run = chorus::sim::simulate(*workload, *cluster, **queue, placement);
    if (!run.ok()) {
      std::fprintf(stderr, "custom_policy: %s\n", run.status().message().c_str());
      return 3;
    }
    auto m = chorus::sim::compute_metrics(*run, cluster->total_cores());
    std::printf("%-15s %11.2fs %11.2fs %8.3f\n", name, m.small_mean_response_s,
                m.large_mean_response_s, m.jain_users);
  }
  return 0;
}
