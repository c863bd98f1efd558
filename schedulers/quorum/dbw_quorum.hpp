// dbw: dynamic backup workers (Xu, Neglia, Sebastianelli, "Dynamic backup workers for parallel
// machine learning", arXiv 2004.14696), as reconstructed, and the engine dbw+ (dbw_plus.hpp)
// switches its fixes on in.
//
// RECONSTRUCTED: only the paper's abstract could be read here. What it states: at each iteration
// DBW picks the number of backup workers that maximises the convergence speed, estimating what it
// needs from the training itself, with no tuning. What this file does (docs/quorum-policies.md):
// at the round's start, choose
//     k* = argmax_k  E[dF(k)] / E[T_(k)],   E[dF(k)] = eta G^2 - (L eta^2 / 2) (G^2 + V / k)
// (the descent lemma's expected decrease with the mean of k gradients, over the expected k-th
// order statistic of the n arrival times), with G^2 = ||grad F||^2, V the per-worker gradient
// variance and L the smoothness estimated from the last round's received gradients
// (gradient_moments.hpp), L from the curvature probe when the aggregator sends one and 1 / eta
// otherwise (so eta L = 1: a step that would overshoot a quadratic's minimum by nothing), and
// E[T_(k)] from the last round's arrival times. Then close at the k*-th arrival. The first round
// uses every result (nothing is known yet). When no k promises a decrease (the estimated noise
// swamps the signal), k* = n, the most accurate gradient (dbw+: the previous round's k*). A round
// without gradient statistics (a workflow's tasks) uses G^2 = 1 and V = `noise` (V / G^2).
//
// DbwConfig's switches are dbw+'s fixes; all off is dbw exactly (tests check it).
#pragma once

#include <memory>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/quorum/arrival_window.hpp"
#include "schedulers/quorum/gradient_moments.hpp"
#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

struct DbwConfig {
  // Estimates of G^2, V and L pooled across rounds (weighted, decaying by 1 - 1/memory per
  // round) instead of the last round's; G^2 of a round then uses the pooled V, which breaks the
  // small-k feedback of the last-round estimate.
  bool pooled = false;
  double memory = 8;
  // Rounds of arrival times the order statistics come from (1: the last round).
  int window = 1;
  // Untimed late results (interrupt mode) at their expected times under an exponential tail
  // fitted to the round (arrival_window.hpp) instead of at the close.
  bool impute = false;
  // The fewest results a round closes with on an arrival (a tick may close with fewer when
  // nothing seen says the rest will come).
  int k_min = 1;
  // Re-decide at each arrival (optimal stopping): close when closing now nets more than waiting
  // for any j more, net = dF(j) - rho E[T_(j) | m arrived, the rest later than now], rho the
  // plan's progress rate max_k dF(k) / E[T_(k)] (renewal reward: the time already spent is
  // sunk, only the expected extra wait is charged, at the rate the round could earn elsewhere).
  bool react = false;
  // Ask for a tick (1 + grace) x the expected arrival time of the planned target: a round
  // blocked on stragglers is re-decided (react) or closed (not react) without an arrival.
  bool deadline = false;
  double grace = 0.25;
  // Not react: the tick closes only when the results in hand are worth it, dF(m) >= worth x
  // dF(k planned); else each later arrival checks again, and the next tick comes after twice
  // the time with half the worth (a hung node still closes the round). 0: the tick closes.
  double worth = 0;
  // V / G^2 when the rounds carry no gradient statistics.
  double noise = 1;
  // Bound L by the stationary relation E[G^2] >= eta L V / (2k) (needs pooled).
  bool floor_l = false;
  // A factor on the L the model uses (1: as estimated); for the ablation of the curvature's
  // effect, not a tuning knob of the defaults.
  double l_scale = 1;
  // The most the planned k may move from one round's plan to the next (0: no limit). A k that
  // varies costs time by itself: E[T_(k)] is convex in k.
  int step = 0;
  // When no k promises a decrease (the G^2 estimate at or below what the noise costs at every
  // k), keep the previous round's plan instead of waiting for all n (dbw's reading). Late in
  // training that is one round in five (S4, seed 101: 58 of 300), and waiting for all n costs
  // the slowest worker's time for a step the model itself calls worthless.
  bool keep_plan = false;
  // The most the planned k may be, as a multiple of the median of this policy's earlier plans
  // (0: no limit). Late in training the noise-held gradient estimate ratchets the one-step rule
  // towards k = n, and E[T_(k)] is convex in k: excursions far above the run's own typical k
  // cost more than they save. Relative to the run's history, so a run that plans k = n from the
  // start (no stragglers) is not limited.
  double ratchet = 0;
};

class DbwQuorum final : public QuorumPolicy {
 public:
  explicit DbwQuorum(const DbwConfig& config);

  // "dbw": option `noise` only; the rule is the paper's.
  static std::vector<OptionSpec> option_specs() { return {{"noise", OptionKind::number}}; }
  static Result<std::unique_ptr<QuorumPolicy>> from_args(PolicyArgs& args);

  void begin(const RoundStart& round) override;
  QuorumVerdict on_arrival(const Arrival& arrival) override;
  double deadline() const override { return deadline_; }
  QuorumVerdict on_tick(double now) override;
  void end(const RoundEnd& round) override;
  int target() const override { return k_plan_; }

  // The estimates the next round will plan with (NaN until known): for tests and logs.
  double signal_estimate() const { return g2_; }
  double variance_estimate() const { return v_; }
  double smoothness_estimate() const { return l_; }
  const ArrivalWindow& arrivals() const { return window_; }

 private:
  // The in-round rule at `now` (an arrival's time or a tick's): close, or wait with k_plan_ and
  // deadline_ updated.
  QuorumVerdict decide(double now, bool from_tick);
  void update_estimates();

  // Not react, past a tick that found the round not worth closing: the worth now asked.
  bool worth_closing(double worth) const;

  DbwConfig config_;
  ArrivalWindow window_;
  GradientMoments moments_;
  std::vector<int> order_;  // the round's workers in arrival order (reserved: no allocation)

  // The round in progress.
  int n_ = 0;
  double start_ = 0;
  int m_ = 0;
  bool exploring_ = true;
  int k_plan_ = 0;
  int last_plan_ = 0;  // the previous round's planned k (0: none)
  // ratchet: how many rounds planned each k (index k), and how many plans in all.
  std::vector<int> plans_;
  int plan_count_ = 0;
  double deadline_ = kNever;
  bool past_tick_ = false;  // not react: a tick found the round not worth closing yet
  double asked_worth_ = 0;  // the worth the next check asks (halved at each such tick)
  ProgressModel model_;
  double rate_ = 0;  // the plan's expected progress per unit time (rho)

  // Estimates carried across rounds.
  bool stats_seen_ = false;
  double g2_ = kNoStat;
  double v_ = kNoStat;
  double l_ = kNoStat;
  double eta_ = kNoStat;
  double l_floor_ = kNoStat;
  double lf_num_ = 0, lf_den_ = 0;
  int lf_rounds_ = 0;
  double v_num_ = 0, v_den_ = 0, g_num_ = 0, g_den_ = 0, l_num_ = 0, l_den_ = 0;
};

}  // namespace chorus
