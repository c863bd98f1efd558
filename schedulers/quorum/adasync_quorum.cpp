#include "schedulers/quorum/adasync_quorum.hpp"

#include <algorithm>
#include <cmath>

#include "schedulers/quorum/quorum_options.hpp"

namespace chorus {

Result<std::unique_ptr<QuorumPolicy>> AdaSyncQuorum::from_args(PolicyArgs& args) {
  AdaSyncConfig c;
  c.k0 = static_cast<int>(quorum_number(args, "k0", c.k0, {1, 1e6, true}));
  if (args.find("floor") != nullptr) c.floor = quorum_number(args, "floor", 0, {0, 1e300});
  c.f_star = quorum_number(args, "f_star", c.f_star, {-1e300, 1e300});
  c.window = static_cast<int>(quorum_number(args, "window", c.window, {1, 10000, true}));
  c.monotone = quorum_number(args, "monotone", 1, {0, 1, false, true}) == 1;
  return std::unique_ptr<QuorumPolicy>(std::make_unique<AdaSyncQuorum>(c));
}

void AdaSyncQuorum::begin(const RoundStart& round) {
  n_ = std::max(round.n, 1);
  moments_.reset();
  order_.clear();
  order_.reserve(static_cast<std::size_t>(n_));
  eta_ = !std::isnan(round.learning_rate) && round.learning_rate > 0 ? round.learning_rate : 1.0;
  e_ = std::isnan(round.loss) ? kNoStat : round.loss - config_.f_star;
  if (std::isnan(e0_) && !std::isnan(e_)) e0_ = e_;
  if (window_.empty() || window_.n() != n_) {
    k_ = n_;  // the calibration round
    return;
  }
  const int k0 = std::min(config_.k0, n_);
  if (std::isnan(e_)) {
    k_ = k0;
    last_k_ = k_;
    return;
  }
  if (std::isnan(a_) && !stats_seen_ && !std::isnan(e0_)) {
    a_ = e0_ / n_;
    eta_a_ = eta_;
  }
  const double a = std::isnan(a_) ? 0 : a_ * (std::isnan(eta_a_) ? 1 : eta_ / eta_a_);
  int best_k = n_;
  double best = 0;
  for (int k = 1; k <= n_; ++k) {
    const double t = std::max(window_.mean_order_stat(k), 1e-12);
    const double rate = (e_ - a / k) / t;
    if (rate > best) {
      best = rate;
      best_k = k;
    }
  }
  k_ = best_k;
  if (last_k_ == 0) last_k_ = k0;
  if (config_.monotone) k_ = std::max(k_, last_k_);
  last_k_ = k_;
}

void AdaSyncQuorum::end(const RoundEnd& round) {
  window_.add_round(round.arrivals, round.start, round.closed_at, order_);
  if (!moments_.has_stats()) return;
  stats_seen_ = true;
  if (!std::isnan(moments_.curvature())) l_ = moments_.curvature();
  if (!std::isnan(a_) || std::isnan(e_) || e_ <= 0) return;
  const double v = moments_.variance();
  const double g2 = moments_.signal(v);
  if (std::isnan(v) || std::isnan(g2) || g2 <= 0) return;
  const double L = std::isnan(l_) ? 1 / eta_ : l_;
  a_ = eta_ * L * v * e_ / g2;
  eta_a_ = eta_;
}

}  // namespace chorus
