// adasync: adaptive K-sync SGD, the baseline of Dutta, Joshi, Ghosh, Dube, Nagpurkar, "Slow and
// Stale Gradients Can Win the Race: Error-Runtime Trade-offs in Distributed SGD" (AISTATS 2018).
//
// What the paper states (its abstract and analysis, as far as they were readable here): K-sync
// SGD (wait for the fastest K of n, drop the rest) has an error-runtime bound, for a c-strongly
// convex (PL) L-smooth loss with gradient variance sigma^2,
//     E[F(w_J)] - F* <= A / K + (1 - eta c)^J (F(w_0) - F* - A / K),   A = eta L sigma^2 / (2c),
// J iterations taking E[X_(K:n)] each: a small K runs fast to a high error floor A / K, a large K
// slowly to a low one; the paper proposes gradually increasing synchronicity, K growing as the
// loss falls, switching where the bounds of K and a larger K cross.
//
// Where we had to choose (the exact switching rule was not readable; docs/quorum-policies.md):
// the bounds cross where the decrease rates cross, so at each round with current loss e = F - F*
// (RoundStart::loss less `f_star`) we pick
//     K = argmax_K (e - A_t / K) / E[T_(K)],   never below the previous round's K (monotone)
// (the rate of the bound's decay, d e / d t = -eta c (e - A / K) / E[X_(K:n)]; eta c is common to
// every K). E[T_(K)] is the windowed mean order statistic of the arrivals (the paper assumes
// exponential times; we use the measured ones). A is the option `floor` when given; otherwise it
// is estimated once, from the first round with two or more gradients and statistics, as
// eta L V e / G^2 (the PL constant c taken as G^2 / (2 e), L from the curvature probe or 1 / eta,
// gradient_moments.hpp), and it follows the learning rate (A_t = A eta_t / eta_A). Without
// statistics and without `floor`, A = e_0 / n (K = 1's floor is 1/n of the first loss). Round 1
// uses every result (arrival times and A are measured on it); then K starts at `k0`. Without a
// loss (RoundStart::loss NaN) K stays at `k0`. When no K promises a decrease, K = n.
#pragma once

#include <memory>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/quorum/arrival_window.hpp"
#include "schedulers/quorum/gradient_moments.hpp"
#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

struct AdaSyncConfig {
  int k0 = 1;
  double floor = kNoStat;  // A; NaN: estimated
  double f_star = 0;
  int window = 10;
  bool monotone = true;
};

class AdaSyncQuorum final : public QuorumPolicy {
 public:
  explicit AdaSyncQuorum(const AdaSyncConfig& config)
      : config_(config), window_(config.window), a_(config.floor) {}

  static std::vector<OptionSpec> option_specs() {
    return {{"k0", OptionKind::number},
            {"floor", OptionKind::number},
            {"f_star", OptionKind::number},
            {"window", OptionKind::number},
            {"monotone", OptionKind::number}};
  }
  static Result<std::unique_ptr<QuorumPolicy>> from_args(PolicyArgs& args);

  void begin(const RoundStart& round) override;
  QuorumVerdict on_arrival(const Arrival& a) override {
    moments_.add(a);
    if (order_.size() < order_.capacity()) order_.push_back(a.worker);
    return a.received >= k_ ? QuorumVerdict::close : QuorumVerdict::wait;
  }
  void end(const RoundEnd& round) override;
  int target() const override { return k_; }

  double floor_estimate() const { return a_; }

 private:
  AdaSyncConfig config_;
  ArrivalWindow window_;
  GradientMoments moments_;
  std::vector<int> order_;  // the round's workers in arrival order (reserved: no allocation)
  int n_ = 0;
  int k_ = 0;
  int last_k_ = 0;
  double eta_ = kNoStat;  // this round's
  double e_ = kNoStat;    // this round's loss above f_star
  double e0_ = kNoStat;   // the first loss seen
  double a_ = kNoStat;    // A at eta_a_
  double eta_a_ = kNoStat;
  double l_ = kNoStat;
  bool stats_seen_ = false;
};

}  // namespace chorus
