// The round simulator (issue 15, the first vehicle): one QuorumPolicy drives synchronous SGD on a
// real Workload with n workers whose service times come from a scenario and a seed, so every
// policy sees the same delays and the same batches, and what differs is only when rounds close.
//
// Round t (0-based here, RoundStart::round = t + 1) starts at T_t with the weights w_t. Worker
// i's result would arrive at start_i + s[t, i] (scenario.hpp's service times), where start_i is
// T_t in interrupt mode (every worker drops what it was doing at the close and restarts with the
// new weights) and max(T_t, the end of its previous work) in timed mode (a late worker finishes
// its stale gradient first; that finish time is reported in RoundEnd::arrivals, uncensored, and
// the stale gradient is not used). The policy sees the arrivals in time order, with ticks at its
// deadline(); the round closes at C_t, the first `close` (with at least one result) or the n-th
// arrival. w_{t+1} = w_t - eta_t * mean(received gradients); T_{t+1} = C_t + overhead (the
// broadcast and aggregation, a constant per round: 0 by default, the live comparison sets the
// measured one).
//
// Only what a real parameter server has goes to the policy: arrival times, each received
// gradient's ||g||^2, the running sum's squared norm, the optional curvature probe, and as
// RoundStart::loss the mean batch loss of the previous round's received results (never the full
// training loss). The full loss F(w_{t+1}) is evaluated after every round for the metric only, at
// no simulated time. Gradients are computed only for results the policy sees.
//
// In timed mode a late worker's finish time is known to the simulator at the close; a live
// server learns it a little later. The simulator hands it over at end(), which a live server
// can only do with a delay: a policy's statistics may be slightly fresher here than live.
#pragma once

#include <cstdint>
#include <span>
#include <limits>
#include <memory>
#include <vector>

#include "core/status.hpp"
#include "schedulers/quorum/quorum_policy.hpp"
#include "schedulers/quorum/sgd/scenario.hpp"
#include "schedulers/quorum/sgd/workload.hpp"

namespace chorus::sgd {

enum class RoundMode : std::uint8_t { interrupt, timed };

struct SimConfig {
  int n = 16;
  int batch = 32;              // samples per worker's gradient
  double learning_rate = 0.5;  // the base step eta (learning_rate_at applies S6's step)
  ScenarioParams scenario;     // switch_at = 0 means half of max_iterations
  RoundMode mode = RoundMode::interrupt;
  double overhead_s = 0;   // added between a round's close and the next round's start
  std::uint64_t seed = 1;  // the service times and the batches
  double target_loss = std::numeric_limits<double>::quiet_NaN();  // NaN: run to the limits
  int max_iterations = 3000;
  double max_time_s = std::numeric_limits<double>::infinity();  // simulated seconds
  bool curvature_probe = false;  // one more gradient per arrival when on
  bool trace = true;             // keep the per-round trace in the result
};

struct RoundTrace {
  int round = 0;    // 1-based
  double time = 0;  // when w_{t+1} is out (C_t + overhead), simulated seconds
  double loss = 0;  // the full training loss F(w_{t+1})
  int k = 0;        // results used
};

struct SimResult {
  bool reached = false;
  double time_to_target = std::numeric_limits<double>::infinity();  // simulated seconds
  int rounds_to_target = 0;
  int iterations = 0;   // rounds run
  double end_time = 0;  // simulated seconds at the last round's end
  double final_loss = 0;
  double mean_k = 0;  // mean results used per round
  // The sum over the rounds run of the first result's delay (its arrival - the round's start)
  // plus the overhead: what these rounds would have taken had each closed at its first result.
  // For wait-all's run, a ceiling on what any policy can gain, if none needs fewer rounds than
  // waiting for all (approximately true: fewer results per round are noisier, not better).
  double first_arrivals_s = 0;
  std::vector<RoundTrace> trace;  // one per round when config.trace
  // The policy's part only: wall seconds spent inside begin / on_arrival / on_tick / end.
  double policy_seconds = 0;
  std::int64_t policy_calls = 0;
};

// Validates `config` (n >= 1, batch >= 1, finite positive learning rate, max_iterations >= 1,
// overhead >= 0) and runs. Allocates before the first round only.
Result<SimResult> simulate_rounds(const Workload& workload, QuorumPolicy& policy,
                                  const SimConfig& config);

// The target loss of a workload: F* + fraction * (F(w0) - F*), F* from a long full-batch
// (accelerated, backtracking) gradient descent from w0, computed once per workload object name
// and cached for the process (thread-safe).
struct LossTarget {
  double initial = 0;  // F(w0)
  double optimum = 0;  // F*, as approximated
  double target = 0;
};
inline constexpr double kDefaultTargetFraction = 0.02;
LossTarget loss_target(const Workload& workload, double fraction = kDefaultTargetFraction);

// Worker `worker`'s batch of round `round` (0-based) into `out` (its size is the batch): drawn
// with replacement from (seed, round, worker) alone, so every policy's run, and a live worker
// given the same seed, sees the same batch for the same (round, worker).
void draw_batch(std::uint64_t seed, int round, int worker, std::size_t samples,
                std::span<std::uint32_t> out);

}  // namespace chorus::sgd
