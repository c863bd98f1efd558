// chorus_live_generators MIX POLICY [--scale F] [--partition S] [--piece-order O] [--seed N]
//                        [--state DIR] [--clock-weight W] [--lane N]
//
// One instance of a generator (bursty, zipf, ...) run for real through the embed API
// (run_workflow: the coordinator, the journal, the in-process function pool) with POLICY as the
// queue, beside the simulator's replay of the same instance under the same policy. Every task is
// a 1-core function task sleeping its runtime, on one node of 32 cores. Arrivals: one 0-core
// "clock" function task per job (user "clock", each its own job, estimate 1 ns, weight W = 1e-6
// where the policy takes weights, so it adds next to nothing to the users' shares), all started at
// once on an empty cluster, clock k sleeping in its pool thread until job k's arrival; job k's
// tasks wait for it. The replay uses the arrivals as the clocks released them (a few ms late),
// and responses are counted from them. Prints one
// JSON object: per job its live and simulated response, the small and large jobs' means (small as
// metrics.hpp classifies them), and how late the clocks released their jobs. --lane N gives the
// policy (uwfq, cfq) the option lane_cores=N, live and in the replay.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/run_workflow.hpp"
#include "api/tasks.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/sim/runtime_partitioning.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_generator.hpp"

using namespace chorus;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kCores = 32;

double seconds_since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration<double>(t - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s MIX POLICY [--scale F] [--partition S] [--piece-order O] [--seed N] "
                 "[--state DIR]\n",
                 argv[0]);
    return 2;
  }
  std::string mix = argv[1], policy = argv[2];
  double scale = 0.1, partition = 1;
  sim::PieceOrder piece_order = sim::PieceOrder::listed;
  std::uint64_t seed = 1;
  std::string state = "/tmp/chorus-live-generators";
  std::string clock_weight = "0.000001";
  std::string lane;  // lane_cores, when given
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--scale")
      scale = std::atof(argv[i + 1]);
    else if (a == "--partition")
      partition = std::atof(argv[i + 1]);
    else if (a == "--piece-order") {
      auto o = sim::parse_piece_order(argv[i + 1]);
      if (!o) {
        std::fprintf(stderr, "--piece-order: '%s' is not one of listed, interleaved\n",
                     argv[i + 1]);
        return 2;
      }
      piece_order = *o;
    } else if (a == "--seed")
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--clock-weight")
      clock_weight = argv[i + 1];
    else if (a == "--state")
      state = argv[i + 1];
    else if (a == "--lane")
      lane = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  auto generated = sim::generate_workload(mix, seed, scale);
  if (!generated.ok()) {
    std::fprintf(stderr, "%s\n", generated.status().message().c_str());
    return 2;
  }
  sim::Workload w =
      partition > 0 ? sim::partition_divisible(*generated, partition, piece_order) : *generated;
  const std::size_t n_jobs = w.jobs.size();

  const OptionOrigin here{"chorus_live_generators"};
  PolicyOptions lane_option;
  if (!lane.empty()) {
    OptionEntry e{"lane_cores", here, {}, {}};
    e.value.text = lane;
    e.value.at = here;
    lane_option.set(e);
  }
  auto registry = PolicyRegistry::with_builtins();
  if (auto q = registry.make_queue(policy, lane_option); !q.ok()) {
    std::fprintf(stderr, "%s\n", q.status().message().c_str());
    return 2;
  }

  // Live: jobs in arrival order, each behind its clock task.
  std::vector<std::size_t> order(n_jobs);
  for (std::size_t j = 0; j < n_jobs; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return w.jobs[a].arrival_s < w.jobs[b].arrival_s;
  });
  auto t0 = std::make_shared<Clock::time_point>();
  std::vector<std::atomic<long>> finish_us(n_jobs), start_us(n_jobs), release_us(n_jobs);
  for (auto& f : finish_us) f = 0;
  for (auto& f : start_us) f = -1;
  for (auto& f : release_us) f = 0;
  WorkflowGraph wf;
  wf.name = "live-" + mix;
  for (std::size_t k = 0; k < n_jobs; ++k) {
    const sim::SimJob& job = w.jobs[order[k]];
    double at = job.arrival_s;
    std::atomic<long>* released = &release_us[order[k]];
    TaskSpec tick = function_task("clock" + std::to_string(k), [t0, at, released] {
      std::this_thread::sleep_until(
          *t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at)));
      *released = static_cast<long>(seconds_since(*t0, Clock::now()) * 1e6);
    });
    tick.user = "clock";  // its own job each (no job name): never a class HistoryWork learns
    tick.estimate = std::chrono::nanoseconds(1);
    const TaskId clock = wf.add(std::move(tick));
    for (std::size_t t = 0; t < job.tasks.size(); ++t) {
      double runtime = job.tasks[t].runtime_s;
      std::atomic<long>* slot = &finish_us[order[k]];
      std::atomic<long>* started = &start_us[order[k]];
      TaskSpec task =
          function_task(job.id + "/" + std::to_string(t),
                        [t0, runtime, slot, started] {
                          long begin = static_cast<long>(seconds_since(*t0, Clock::now()) * 1e6);
                          long none = -1;
                          started->compare_exchange_strong(none, begin);
                          std::this_thread::sleep_for(std::chrono::duration<double>(runtime));
                          long us = static_cast<long>(seconds_since(*t0, Clock::now()) * 1e6);
                          long seen = slot->load();
                          while (us > seen && !slot->compare_exchange_weak(seen, us)) {
                          }
                        },
                        {clock});
      task.per_rank.cores = 1;
      task.user = job.user;
      task.job = job.id;
      task.estimate = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(runtime));
      wf.add(std::move(task));
    }
  }
  if (!lane.empty()) wf.scheduler.options.set(lane_option.entries.front());
  if (policy != "fifo") {
    OptionEntry weights{"weights", here, {}, {}};
    weights.value.kind = OptionValue::Kind::map;
    weights.value.at = here;
    OptionValue tiny;
    tiny.text = clock_weight;
    tiny.at = here;
    weights.value.items.push_back({"clock", here, tiny, {}});
    wf.scheduler.options.set(weights);
  }
  std::filesystem::remove_all(state);
  RunOptions options;
  options.state_dir = state;
  options.queue = policy;
  // Every clock sleeps in a pool thread from the start; the tasks need kCores more.
  options.function_threads = static_cast<int>(n_jobs) + kCores + 8;
  *t0 = Clock::now();
  options.nodes = {NodeInfo{"n0", Resources{kCores, 0, 0}}};
  auto outcome = run_workflow(wf, options);
  if (!outcome.ok()) {
    std::fprintf(stderr, "%s\n", outcome.status().message().c_str());
    return 1;
  }
  // The simulator's replay of the same instance, arrivals as the clocks released them.
  double late_max = 0, late_sum = 0;
  for (std::size_t j = 0; j < n_jobs; ++j) {
    double released = static_cast<double>(release_us[j].load()) * 1e-6;
    late_max = std::max(late_max, released - w.jobs[j].arrival_s);
    late_sum += released - w.jobs[j].arrival_s;
    w.jobs[j].arrival_s = std::max(w.jobs[j].arrival_s, released);
  }
  auto queue = registry.make_queue(policy, lane_option);
  auto cluster = sim::parse_cluster("1x" + std::to_string(kCores));
  FirstFit first_fit;
  auto simulated = sim::simulate(w, *cluster, **queue, first_fit);
  if (!simulated.ok()) {
    std::fprintf(stderr, "%s\n", simulated.status().message().c_str());
    return 1;
  }
  // Small: as metrics.hpp (the size class, else work at most the median).
  std::vector<double> works;
  for (const auto& j : w.jobs) works.push_back(j.work());
  std::sort(works.begin(), works.end());
  const double median_work = works[(works.size() + 1) / 2 - 1];
  double live_small = 0, sim_small = 0, live_large = 0, sim_large = 0;
  int n_small = 0, n_large = 0;
  std::string per_job;
  for (std::size_t j = 0; j < n_jobs; ++j) {
    const sim::SimJob& job = w.jobs[j];
    double live = static_cast<double>(finish_us[j].load()) * 1e-6 - job.arrival_s;
    double simd = simulated->jobs[j].response_s();
    bool small = job.size == sim::SizeClass::small ||
                 (job.size == sim::SizeClass::unknown && job.work() <= median_work);
    (small ? live_small : live_large) += live;
    (small ? sim_small : sim_large) += simd;
    ++(small ? n_small : n_large);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s{\"job\": \"%s\", \"small\": %s, \"live\": %.4f, \"sim\": %.4f, "
                  "\"live_start_s\": %.4f, \"sim_start_s\": %.4f, \"arrival_s\": %.4f}",
                  per_job.empty() ? "" : ", ", job.id.c_str(), small ? "true" : "false", live, simd,
                  static_cast<double>(start_us[j].load()) * 1e-6, simulated->jobs[j].start_s,
                  job.arrival_s);
    per_job += buf;
  }
  std::printf(
      "{\"mix\": \"%s\", \"policy\": \"%s\", \"scale\": %g, \"partition_s\": %g, \"seed\": %llu, "
      "\"jobs\": %zu, \"tasks\": %zu, \"small_jobs\": %d, \"live_small_mean_s\": %.4f, "
      "\"sim_small_mean_s\": %.4f, \"live_large_mean_s\": %.4f, \"sim_large_mean_s\": %.4f, "
      "\"succeeded\": %zu, \"clock_late_mean_s\": %.4f, \"clock_late_max_s\": %.4f, "
      "\"per_job\": [%s]}\n",
      mix.c_str(), policy.c_str(), scale, partition, static_cast<unsigned long long>(seed), n_jobs,
      w.task_count(), n_small, live_small / std::max(1, n_small), sim_small / std::max(1, n_small),
      live_large / std::max(1, n_large), sim_large / std::max(1, n_large),
      static_cast<std::size_t>(outcome->summary.progress.succeeded),
      late_sum / static_cast<double>(std::max<std::size_t>(1, n_jobs)), late_max, per_job.c_str());
  return 0;
}
