// Straggler scenarios (issue 15, S0-S6): the service time of every (worker, iteration) drawn
// from a seed, so the simulator and the live workers see identical delays and every policy is
// compared on the same ones.
//
//   S0 none           every worker takes `base_s` (plus nothing)
//   S1 shifted-exp    base_s + Exp(mean tail_s)
//   S2 pareto         base_s x Pareto(alpha 1.5, scale 1): heavy tail
//   S3 markov         two-state bursts per worker (fast / slow x slow_factor), sticky
//   S4 two-slow       two workers persistently slow_factor x slower, the rest S1
//   S5 regime-switch  S1 until `switch_at`, S2 after: the best k moves mid-training
//   S6 lr-step        S1 delays; the learning rate drops to eta / 10 at `switch_at`
//
// The live workers add these delays to their real compute (a sleep after the gradient), so the
// simulator's prediction and the live run share them; the live cgroup / SIGSTOP / tc stragglers
// are other, non-replayable ways of making the same shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chorus::sgd {

enum class Scenario : std::uint8_t {
  none,
  shifted_exp,
  pareto,
  markov,
  two_slow,
  regime_switch,
  lr_step,
};

struct ScenarioParams {
  Scenario scenario = Scenario::none;
  double base_s = 0.01;       // the no-straggler service time of one gradient
  double tail_s = 0.01;       // S1's exponential mean (and S4's, S5's, S6's S1 part)
  double pareto_alpha = 1.5;  // S2
  double slow_factor = 4.0;   // S3's slow state, S4's slow workers
  double burst_enter = 0.05;  // S3: chance per iteration a fast worker turns slow
  double burst_leave = 0.3;   // S3: chance per iteration a slow worker turns fast
  int switch_at = 0;          // S5, S6: the iteration of the change (0: half of the iterations)
};

// "S0".."S6" or the names above ("shifted-exp", "regime-switch", ...).
std::optional<Scenario> parse_scenario(std::string_view text);
std::string_view scenario_name(Scenario s);  // "S2 pareto"

// n x iterations service times in seconds, [iteration * n + worker], iterations 0-based. The same
// (params, n, iterations, seed) always gives the same values, whatever the caller.
std::vector<double> service_times(const ScenarioParams& params, int n, int iterations,
                                  std::uint64_t seed);

// The step size of `iteration` (0-based) for a base `eta`: eta except under S6 after switch_at
// (eta / 10). `iterations` resolves switch_at = 0.
double learning_rate_at(const ScenarioParams& params, double eta, int iteration, int iterations);

}  // namespace chorus::sgd
