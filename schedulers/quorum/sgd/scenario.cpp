// The straggler scenarios (scenario.hpp). Every draw is a counter-based hash of (seed, stream,
// worker, iteration): a (worker, iteration) value depends on neither n nor the order of calls,
// so the live workers can compute their own delays and a run with n = 8 sees the first 8
// workers' delays of a run with n = 16. Only S3's chain is sequential in iterations, per worker.
#include "schedulers/quorum/sgd/scenario.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace chorus::sgd {
namespace {

// splitmix64's finaliser: a good 64-bit mix (Steele, Lea, Flood 2014).
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Streams keep the draws of different purposes independent.
enum Stream : std::uint64_t { kTail = 1, kPareto = 2, kChain = 3, kChainStart = 4 };

// A uniform in (0, 1) (never 0, so logs and negative powers stay finite).
double uniform(std::uint64_t seed, Stream stream, int worker, int iteration) {
  std::uint64_t h = mix(seed ^ mix(stream));
  h = mix(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(worker)));
  h = mix(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(iteration)) << 32));
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

double shifted_exp(const ScenarioParams& p, std::uint64_t seed, int worker, int it) {
  return p.base_s - p.tail_s * std::log(uniform(seed, kTail, worker, it));
}

double pareto(const ScenarioParams& p, std::uint64_t seed, int worker, int it) {
  return p.base_s * std::pow(uniform(seed, kPareto, worker, it), -1.0 / p.pareto_alpha);
}

int resolved_switch(const ScenarioParams& p, int iterations) {
  return p.switch_at > 0 ? p.switch_at : iterations / 2;
}

constexpr std::array<std::string_view, 7> kNames = {"none",     "shifted-exp",   "pareto", "markov",
                                                    "two-slow", "regime-switch", "lr-step"};

}  // namespace

std::optional<Scenario> parse_scenario(std::string_view text) {
  if (text.size() == 2 && (text[0] == 'S' || text[0] == 's') && text[1] >= '0' && text[1] <= '6') {
    return static_cast<Scenario>(text[1] - '0');
  }
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (text == kNames[i]) return static_cast<Scenario>(i);
  }
  return std::nullopt;
}

std::string_view scenario_name(Scenario s) {
  static constexpr std::array<std::string_view, 7> kFull = {
      "S0 none",     "S1 shifted-exp",   "S2 pareto", "S3 markov",
      "S4 two-slow", "S5 regime-switch", "S6 lr-step"};
  const auto i = static_cast<std::size_t>(s);
  return i < kFull.size() ? kFull[i] : std::string_view("unknown");
}

std::vector<double> service_times(const ScenarioParams& p, int n, int iterations,
                                  std::uint64_t seed) {
  if (n <= 0 || iterations <= 0) return {};
  std::vector<double> out(static_cast<std::size_t>(n) * static_cast<std::size_t>(iterations));
  const int switch_at = resolved_switch(p, iterations);
  for (int w = 0; w < n; ++w) {
    // S3: start in the chain's stationary state, then one sticky step per iteration.
    const double stay_slow = p.burst_enter / std::max(p.burst_enter + p.burst_leave, 1e-300);
    bool slow = uniform(seed, kChainStart, w, 0) < stay_slow;
    for (int it = 0; it < iterations; ++it) {
      double s = 0;
      switch (p.scenario) {
        case Scenario::none:
          s = p.base_s;
          break;
        case Scenario::shifted_exp:
        case Scenario::lr_step:
          s = shifted_exp(p, seed, w, it);
          break;
        case Scenario::pareto:
          s = pareto(p, seed, w, it);
          break;
        case Scenario::markov:
          if (it > 0) {
            const double u = uniform(seed, kChain, w, it);
            slow = slow ? u >= p.burst_leave : u < p.burst_enter;
          }
          s = shifted_exp(p, seed, w, it) * (slow ? p.slow_factor : 1.0);
          break;
        case Scenario::two_slow:
          // Workers 0 and 1, whatever n: a worker's delays never depend on n.
          s = shifted_exp(p, seed, w, it) * (w < 2 ? p.slow_factor : 1.0);
          break;
        case Scenario::regime_switch:
          s = it < switch_at ? shifted_exp(p, seed, w, it) : pareto(p, seed, w, it);
          break;
      }
      out[static_cast<std::size_t>(it) * static_cast<std::size_t>(n) +
          static_cast<std::size_t>(w)] = s;
    }
  }
  return out;
}

double learning_rate_at(const ScenarioParams& p, double eta, int iteration, int iterations) {
  if (p.scenario != Scenario::lr_step) return eta;
  return iteration >= resolved_switch(p, iterations) ? eta / 10.0 : eta;
}

}  // namespace chorus::sgd
