// The cost of a quorum policy's calls (issue 15: at most 2 us per call) for every built-in rule
// at n = 16 and n = 64 workers. 256 rounds of Pareto(1.5) arrival times with gradient statistics
// (8-dimensional synthetic gradients, precomputed) are replayed in a loop after a warm-up of 64
// rounds, so the windows are full and nothing allocates.
//   quorum_round/<policy>/<n>:    one round (begin, arrivals until the close, the ticks it asks
//                                 for before the next arrival, end); items = those calls
//                                 (deadline() reads, a field load, not counted), so
//                                 1 / items_per_second is the mean cost of one call.
//   quorum_{begin,arrival,end}/<policy>/<n>: that call alone (manual time around each call,
//                                 steady clock: includes ~20-40 ns of clock reads); items =
//                                 calls, so 1 / items_per_second is the cost of one.
//   quorum_endinterrupt/<policy>/<n>: end() with the late results untimed (kNever), as an
//                                 interrupt-mode round ends (the simulator's default).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "schedulers/policy_registry.hpp"

namespace {

using namespace chorus;

struct ReplayRound {
  std::vector<int> order;       // workers by arrival time
  std::vector<double> times;    // absolute, by worker
  std::vector<double> grad_sq;  // by arrival rank
  std::vector<double> sum_sq;   // by arrival rank
};

std::vector<ReplayRound> make_rounds(int n, int count) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> z(0, 1);
  std::vector<ReplayRound> rounds(count);
  double start = 0;
  for (auto& r : rounds) {
    r.times.resize(n);
    for (double& t : r.times) t = start + 0.01 * std::pow(1 - u(rng), -1 / 1.5);
    r.order.resize(n);
    std::iota(r.order.begin(), r.order.end(), 0);
    std::sort(r.order.begin(), r.order.end(),
              [&](int a, int b) { return r.times[a] < r.times[b]; });
    std::vector<double> sum(8, 0.0);
    for (int i = 0; i < n; ++i) {
      double gg = 0, ss = 0;
      for (double& s : sum) {
        const double g = 0.5 + z(rng);
        gg += g * g;
        s += g;
        ss += s * s;
      }
      r.grad_sq.push_back(gg);
      r.sum_sq.push_back(ss);
    }
    start = *std::max_element(r.times.begin(), r.times.end()) + 0.001;
  }
  return rounds;
}

// Plays one round; returns the policy calls made. kTimed: which call's time to accumulate;
// end_interrupt also ends the round as interrupt mode does (late results untimed, kNever).
enum class Timed { none, begin, arrival, end, end_interrupt };

struct Clock {
  std::chrono::steady_clock::time_point t0;
  void start() { t0 = std::chrono::steady_clock::now(); }
  double stop() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

template <Timed kTimed>
int play(QuorumPolicy& p, const ReplayRound& r, int round, double& arrival_seconds, int& arrivals) {
  const int n = static_cast<int>(r.times.size());
  const double start = r.times[r.order[0]] - 0.01;
  Clock clock;
  if constexpr (kTimed == Timed::begin) clock.start();
  p.begin({.round = round, .n = n, .time = start, .learning_rate = 0.1, .loss = 1.0 / round});
  if constexpr (kTimed == Timed::begin) {
    arrival_seconds += clock.stop();
    ++arrivals;
  }
  int calls = 1;
  double closed_at = r.times[r.order[n - 1]];
  for (int i = 0; i < n; ++i) {
    const double at = r.times[r.order[i]];
    bool closed = false;
    while (i > 0 && p.deadline() < at) {
      const double now = p.deadline();
      calls += 1;
      if (p.on_tick(now) == QuorumVerdict::close) {
        closed = true;
        closed_at = now;
        break;
      }
    }
    if (closed) break;
    const Arrival a{.worker = r.order[i],
                    .time = at,
                    .received = i + 1,
                    .grad_sq_norm = r.grad_sq[i],
                    .sum_sq_norm = r.sum_sq[i],
                    .curvature = 1.0};
    QuorumVerdict v;
    if constexpr (kTimed == Timed::arrival) {
      clock.start();
      v = p.on_arrival(a);
      arrival_seconds += clock.stop();
      ++arrivals;
    } else {
      v = p.on_arrival(a);
    }
    calls += 1;  // on_arrival (the deadline reads, a field load, are not counted)
    if (v == QuorumVerdict::close) {
      closed_at = at;
      break;
    }
  }
  constexpr bool kInterrupt = kTimed == Timed::end_interrupt;
  thread_local std::vector<double> censored;
  if constexpr (kInterrupt) {
    censored.assign(r.times.begin(), r.times.end());
    for (double& t : censored)
      if (t > closed_at) t = kNever;
  }
  if constexpr (kTimed == Timed::end || kInterrupt) clock.start();
  p.end({.round = round,
         .start = start,
         .closed_at = closed_at,
         .used = 0,
         .arrivals =
             kInterrupt ? std::span<const double>(censored) : std::span<const double>(r.times),
         .timed = !kInterrupt});
  if constexpr (kTimed == Timed::end || kInterrupt) {
    arrival_seconds += clock.stop();
    ++arrivals;
  }
  return calls + 1;
}

std::unique_ptr<QuorumPolicy> make(const std::string& name) {
  static const auto registry = PolicyRegistry::with_builtins();
  PolicyOptions o;
  if (name == "static")
    o.entries.push_back(
        {"b", {"bench", 1, 1}, {OptionValue::Kind::scalar, "2", {}, {"bench", 1, 4}}, {}});
  auto made = registry.make_quorum(name, o);
  return made.ok() ? std::move(*made) : nullptr;
}

template <Timed kTimed>
void run(benchmark::State& state, const std::string& name) {
  const int n = static_cast<int>(state.range(0));
  const auto rounds = make_rounds(n, 256);
  auto policy = make(name);
  if (!policy) {
    state.SkipWithError("no such policy");
    return;
  }
  double secs = 0;
  int arrivals = 0;
  int round = 1;
  for (int i = 0; i < 64; ++i, ++round)
    play<Timed::none>(*policy, rounds[i % 256], round, secs, arrivals);
  std::int64_t calls = 0;
  std::size_t next = 0;
  for (auto _ : state) {
    secs = 0;
    calls += play<kTimed>(*policy, rounds[next], round++, secs, arrivals);
    next = (next + 1) % rounds.size();
    if constexpr (kTimed != Timed::none) state.SetIterationTime(secs);
  }
  state.SetItemsProcessed(kTimed != Timed::none ? arrivals : calls);
}

void register_all() {
  for (const char* name : {"wait-all", "static", "dbw", "adasync", "dbw+"}) {
    const std::string p = name;
    benchmark::RegisterBenchmark(("quorum_round/" + p).c_str(),
                                 [p](benchmark::State& s) { run<Timed::none>(s, p); })
        ->Arg(16)
        ->Arg(64);
    benchmark::RegisterBenchmark(("quorum_begin/" + p).c_str(),
                                 [p](benchmark::State& s) { run<Timed::begin>(s, p); })
        ->Arg(16)
        ->Arg(64)
        ->UseManualTime();
    benchmark::RegisterBenchmark(("quorum_arrival/" + p).c_str(),
                                 [p](benchmark::State& s) { run<Timed::arrival>(s, p); })
        ->Arg(16)
        ->Arg(64)
        ->UseManualTime();
    benchmark::RegisterBenchmark(("quorum_end/" + p).c_str(),
                                 [p](benchmark::State& s) { run<Timed::end>(s, p); })
        ->Arg(16)
        ->Arg(64)
        ->UseManualTime();
    benchmark::RegisterBenchmark(("quorum_endinterrupt/" + p).c_str(),
                                 [p](benchmark::State& s) { run<Timed::end_interrupt>(s, p); })
        ->Arg(16)
        ->Arg(64)
        ->UseManualTime();
  }
}

const int registered = (register_all(), 0);

}  // namespace
