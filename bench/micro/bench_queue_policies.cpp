// Scheduling decisions per second of each queue policy with 100,000 queued jobs from 1,000 users
// (target: >= 1,000,000/s, O(log n) per decision). One decision = next() + on_start() of the
// chosen task, on_finish() of a task started earlier, and on_ready() of a new one-task job of the
// same user, so the queue stays at 100,000 and the policy's bookkeeping (pools' running counts,
// virtual time) moves as in a live run. Time advances 1 ms per decision. The "/queued" argument
// shows how the cost grows with the queue: O(log n) work per decision, but at 10^6 queued jobs
// memory dominates (a pop down a binary heap over all jobs misses the cache at most levels), which
// is why uwfq/cfq keep a sorted run per flow and a heap over flows. uwfq's timed loop at 10^6 also
// includes, once, every user retiring from the virtual system (all jobs were queued at time 0
// with V frozen, so each user's 1,000-job chain is dropped within the first ~2,000 decisions).
// "decisions_overtaking/uwfq" is uwfq where every new job is shorter than all queued ones, so it
// goes to the front of its user's chain and moves the deadline of each of the user's queued jobs
// (the order that cost O(jobs per user) per arrival before the chain kept prefix sums). Its
// cluster has 64 cores, so V crawls and the users' chains (100 or 1,000 jobs each) stay whole.
// "decisions_lane/uwfq_*" is uwfq with the short-job lane (lane_cores 2 or auto): the lane's
// bookkeeping per start and finish (the running tasks' cores, auto's time average, the work
// cutoff); on a cluster this large it never holds a task back.
#include <benchmark/benchmark.h>

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "schedulers/policy_registry.hpp"

namespace {

using namespace chorus;

void run_decisions(benchmark::State& state, const std::string& policy, bool overtaking,
                   const std::string& lane = {}) {
  const auto queued = static_cast<std::size_t>(state.range(0));
  constexpr std::size_t kUsers = 1000;
  auto registry = PolicyRegistry::with_builtins();
  PolicyOptions options;
  if (!lane.empty()) {
    const OptionOrigin here{"bench_queue_policies"};
    OptionEntry e{"lane_cores", here, {}, {}};
    e.value.text = lane;
    e.value.at = here;
    options.set(e);
  }
  auto made = registry.make_queue(policy, options);
  if (!made.ok()) {
    state.SkipWithError(made.status().message().c_str());
    return;
  }
  QueuePolicy& q = **made;
  NodeInfo node{"n0", Resources{overtaking ? 64 : 1 << 20, 0, 0}};
  NodeView view{&node, node.capacity, 0};
  // Ids come from a pool twice the queue size: queued ones, running ones (finished oldest first,
  // at most half the queue) and free ones, reused for new jobs.
  std::vector<TaskSpec> tasks(2 * queued);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    tasks[i].id = static_cast<TaskId>(i);
    tasks[i].user = "user" + std::to_string(i % kUsers);
    tasks[i].estimate = std::chrono::milliseconds(100 + 37 * (i % 50));
  }
  TimePoint now{};
  std::int64_t arrivals = 0;
  // Shorter than every job before it: 1000 s / (2 + arrivals so far).
  auto shrink = [&](TaskSpec& t) {
    if (overtaking) t.estimate = std::chrono::nanoseconds(1'000'000'000'000 / (2 + arrivals++));
  };
  for (std::size_t i = 0; i < queued; ++i) {
    shrink(tasks[i]);
    q.on_ready(tasks[i], now);
  }
  std::vector<TaskId> free_ids;
  for (std::size_t i = tasks.size(); i > queued; --i)
    free_ids.push_back(static_cast<TaskId>(i - 1));
  std::deque<TaskId> running;
  for (auto _ : state) {
    now += std::chrono::milliseconds(1);
    ClusterView cluster{std::span<const NodeView>(&view, 1), now};
    auto id = q.next(cluster);
    if (!id) {
      state.SkipWithError("queue ran dry");
      return;
    }
    q.on_start(tasks[*id], now);
    running.push_back(*id);
    if (running.size() > queued / 2) {
      TaskId done = running.front();
      running.pop_front();
      q.on_finish(tasks[done], TaskState::succeeded, std::chrono::milliseconds(100), now);
      free_ids.push_back(done);
    }
    TaskId fresh = free_ids.back();
    free_ids.pop_back();
    shrink(tasks[fresh]);
    q.on_ready(tasks[fresh], now);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["queued"] = static_cast<double>(q.size());
}

void decisions(benchmark::State& state, const std::string& policy) {
  run_decisions(state, policy, false);
}

void decisions_overtaking(benchmark::State& state, const std::string& policy) {
  run_decisions(state, policy, true);
}

void decisions_lane(benchmark::State& state, const std::string& lane) {
  run_decisions(state, "uwfq", false, lane);
}

}  // namespace

BENCHMARK_CAPTURE(decisions, fifo, std::string("fifo"))->Arg(100000);
BENCHMARK_CAPTURE(decisions, fair, std::string("fair"))->Arg(10000)->Arg(100000);
BENCHMARK_CAPTURE(decisions, ujf, std::string("ujf"))->Arg(100000);
BENCHMARK_CAPTURE(decisions, cfq, std::string("cfq"))->Arg(100000);
BENCHMARK_CAPTURE(decisions, uwfq, std::string("uwfq"))->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK_CAPTURE(decisions_overtaking, uwfq, std::string("uwfq"))->Arg(100000)->Arg(1000000);
BENCHMARK_CAPTURE(decisions_lane, uwfq_2, std::string("2"))->Arg(100000);
BENCHMARK_CAPTURE(decisions_lane, uwfq_auto, std::string("auto"))->Arg(100000);
