// chorus_uwfq_probe: the evidence behind docs/uwfq-beyond-the-paper.md. Runs a generator's
// workload through fair and uwfq in the simulator, wrapping the queue policy to watch every
// decision, and prints per seed:
//   small      the small jobs' mean response, and its part waiting for their first task to start
//   inversions decisions that started a large job's task while a small job's task was queued
//              (uwfq: and of those, how many chose a job whose deadline was already behind V)
//   arrive D-V uwfq: a new large job's deadline minus V when it arrives (median, minimum): how far
//              in the past a new job is anchored
//   clump      task-weighted mean count of tasks ending at the same instant (lockstep pieces)
//   resid      small arrivals on a full cluster: mean time until the first running task ends
//
//   users      with --users, per user of the first seed: its work, received / entitled service
//              (what jain_users is over) and Σ response / Σ ideal user-fair response (what
//              fair_attainment caps at 1 and is over)
//
//   chorus_uwfq_probe MIX [--partition S] [--grace S] [--seeds N] [--jitter F] [--shuffle]
//                     [--users] [KEY=VALUE ...]   (generator parameters, as --gen-params)
// --jitter F multiplies every task's runtime (after partitioning) by uniform [1-F, 1+F];
// --shuffle shuffles each job's tasks (the order a job's pieces are handed out in).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/uwfq_queue.hpp"
#include "schedulers/sim/metrics.hpp"
#include "schedulers/sim/runtime_partitioning.hpp"
#include "schedulers/sim/sim_random.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_generator.hpp"

using namespace chorus;
using namespace chorus::sim;

namespace {

double secs(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Forwards every call to the policy under test and watches it.
class Probe final : public QueuePolicy {
 public:
  Probe(QueuePolicy& q, const std::set<std::string>& small, int cores)
      : q_(q), vq_(dynamic_cast<VirtualFairQueue*>(&q)), small_(small), cores_(cores) {}
  std::string_view name() const override { return q_.name(); }

  void on_ready(const TaskSpec& t, TimePoint now) override {
    bool small = small_.count(t.job) > 0;
    bool first = seen_.insert(t.job).second;
    if (small && first && static_cast<int>(running_end_.size()) >= cores_) {
      double soonest = std::numeric_limits<double>::infinity();
      for (const auto& [id, end] : running_end_) soonest = std::min(soonest, end - secs(now));
      resid_.push_back(soonest);
    }
    q_.on_ready(t, now);
    queued_small_[t.id] = small;
    if (vq_ && !small && first)
      arrive_offset_.push_back(*vq_->deadline_of(t.id) - vq_->virtual_time());
  }
  std::optional<TaskId> next(const ClusterView& c) override {
    auto n = q_.next(c);
    if (!n || queued_small_[*n]) return n;
    bool small_waits = false;
    for (const auto& [id, small] : queued_small_) small_waits = small_waits || small;
    if (small_waits) {
      ++inversions_;
      if (vq_ && *vq_->deadline_of(*n) < vq_->virtual_time()) ++overdue_;
    }
    return n;
  }
  void on_start(const TaskSpec& t, TimePoint now) override {
    q_.on_start(t, now);
    queued_small_.erase(t.id);
    running_end_[t.id] = secs(now) + std::chrono::duration<double>(t.estimate).count();
  }
  void on_finish(const TaskSpec& t, TaskState s, Duration d, TimePoint now) override {
    q_.on_finish(t, s, d, now);
    running_end_.erase(t.id);
    if (now == last_finish_) {
      ++clump_;
    } else {
      flush_clump();
      clump_ = 1;
      last_finish_ = now;
    }
  }
  void remove(TaskId t) override {
    q_.remove(t);
    queued_small_.erase(t);
  }
  std::size_t size() const override { return q_.size(); }

  void report() {
    flush_clump();
    std::printf(" inversions %6ld", inversions_);
    if (vq_) std::printf(" (overdue %6ld)", overdue_);
    std::printf(" clump %.2f resid %.3f", clump_sq_ / std::max(1.0, clump_n_), mean(resid_));
    if (vq_ && !arrive_offset_.empty()) {
      std::printf(" arrive D-V median %7.2f min %8.2f", median(arrive_offset_),
                  *std::min_element(arrive_offset_.begin(), arrive_offset_.end()));
    }
  }

 private:
  void flush_clump() {
    clump_sq_ += static_cast<double>(clump_) * static_cast<double>(clump_);
    clump_n_ += static_cast<double>(clump_);
    clump_ = 0;
  }
  QueuePolicy& q_;
  VirtualFairQueue* vq_;
  const std::set<std::string>& small_;
  int cores_;
  std::set<std::string> seen_;
  std::unordered_map<TaskId, bool> queued_small_;
  std::unordered_map<TaskId, double> running_end_;
  long inversions_ = 0, overdue_ = 0, clump_ = 0;
  double clump_sq_ = 0, clump_n_ = 0;
  TimePoint last_finish_{};
  std::vector<double> resid_, arrive_offset_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s MIX [--partition S] [--grace S] [--seeds N] [--jitter F] "
                 "[--shuffle] [KEY=VALUE ...]\n",
                 argv[0]);
    return 2;
  }
  std::string mix = argv[1];
  double partition = 0, jitter = 0, grace = -1;
  int seeds = 5;
  bool shuffle = false, users = false;
  GeneratorValues values;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::atof(argv[++i]) : 0.0; };
    if (a == "--partition") {
      partition = value();
    } else if (a == "--grace") {
      grace = value();
    } else if (a == "--seeds") {
      seeds = static_cast<int>(value());
    } else if (a == "--jitter") {
      jitter = value();
    } else if (a == "--shuffle") {
      shuffle = true;
    } else if (a == "--users") {
      users = true;
    } else if (auto eq = a.find('='); eq != std::string::npos) {
      values[a.substr(0, eq)] = std::atof(a.c_str() + eq + 1);
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  auto cluster = parse_cluster("8x4");
  const int cores = static_cast<int>(cluster->total_cores());
  auto registry = PolicyRegistry::with_builtins();
  for (int seed = 1; seed <= seeds; ++seed) {
    auto generated = generate_workload(mix, static_cast<std::uint64_t>(seed), 1, values);
    if (!generated.ok()) {
      std::fprintf(stderr, "%s\n", generated.status().message().c_str());
      return 2;
    }
    Workload w = partition > 0 ? partition_divisible(*generated, partition) : *generated;
    SimRandom rng(static_cast<std::uint64_t>(seed) * 7919);
    for (auto& j : w.jobs) {
      bool deps = false;
      for (const auto& t : j.tasks) deps = deps || !t.after.empty() || !t.after_other.empty();
      if (shuffle && !deps) {
        for (std::size_t i = j.tasks.size(); i > 1; --i)
          std::swap(j.tasks[i - 1], j.tasks[rng.next_u64() % i]);
      }
      if (jitter > 0) {
        for (auto& t : j.tasks) t.runtime_s *= rng.uniform(1 - jitter, 1 + jitter);
      }
    }
    std::vector<double> works;
    for (const auto& j : w.jobs) works.push_back(j.work());
    std::sort(works.begin(), works.end());
    const double median_work = works[(works.size() + 1) / 2 - 1];
    std::set<std::string> small;  // as metrics.hpp classifies them
    for (const auto& j : w.jobs) {
      if (j.size == SizeClass::small || (j.size == SizeClass::unknown && j.work() <= median_work))
        small.insert(j.id);
    }
    for (const char* policy : {"fair", "uwfq"}) {
      std::unique_ptr<QueuePolicy> q;
      if (std::string(policy) == "uwfq" && grace >= 0) {
        FairQueueOptions o = UwfqQueue::default_options();
        o.grace = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(grace));
        q = std::make_unique<UwfqQueue>(std::move(o));
      } else {
        auto made = registry.make_queue(policy);
        q = std::move(*made);
      }
      Probe probe(*q, small, cores);
      FirstFit first_fit;
      auto run = simulate(w, *cluster, probe, first_fit);
      if (!run.ok()) {
        std::fprintf(stderr, "%s\n", run.status().message().c_str());
        return 1;
      }
      Metrics m = compute_metrics(*run, cores);
      std::vector<double> wait;
      for (const auto& j : run->jobs) {
        if (small.count(j.id)) wait.push_back(j.start_s - j.arrival_s);
      }
      std::printf("seed %d %-4s small %.3f s (first start after %.3f s) jain %.3f attain %.3f",
                  seed, policy, m.small_mean_response_s, mean(wait), m.jain_users,
                  m.fair_attainment_jain);
      probe.report();
      std::printf("\n");
      if (users && seed == 1) {
        auto ideal = ideal_finish_times(run->jobs, cores, {});
        std::map<std::string, std::array<double, 3>> by_user;  // work, Σ response, Σ ideal
        for (std::size_t i = 0; i < run->jobs.size(); ++i) {
          const JobRecord& j = run->jobs[i];
          auto& u = by_user[j.user];
          u[0] += j.work;
          u[1] += j.response_s();
          u[2] += ideal[i] - j.arrival_s;
        }
        for (const auto& [user, share] : run->users) {
          const auto& u = by_user[user];
          std::printf("    %-8s work %8.1f core-s  received/entitled %.3f  response/ideal %.2f\n",
                      user.c_str(), u[0], share.received / share.entitled, u[1] / u[2]);
        }
      }
    }
  }
  return 0;
}
