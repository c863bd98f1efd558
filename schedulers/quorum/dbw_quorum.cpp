#include "schedulers/quorum/dbw_quorum.hpp"

#include <algorithm>
#include <cmath>

#include "schedulers/quorum/quorum_options.hpp"

namespace chorus {
namespace {

// Arrival times are positive; a zero (a result at the very start) would divide by zero.
constexpr double kTiny = 1e-12;

}  // namespace

DbwQuorum::DbwQuorum(const DbwConfig& config)
    : config_(config), window_(config.window, config.impute) {}

Result<std::unique_ptr<QuorumPolicy>> DbwQuorum::from_args(PolicyArgs& args) {
  DbwConfig c;
  c.noise = quorum_number(args, "noise", c.noise, {0, 1e9});
  return std::unique_ptr<QuorumPolicy>(std::make_unique<DbwQuorum>(c));
}

void DbwQuorum::begin(const RoundStart& round) {
  n_ = std::max(round.n, 1);
  start_ = round.time;
  m_ = 0;
  moments_.reset();
  order_.clear();
  order_.reserve(static_cast<std::size_t>(n_));
  deadline_ = kNever;
  past_tick_ = false;
  asked_worth_ = config_.worth;
  exploring_ = window_.empty() || window_.n() != n_;
  if (exploring_) {
    k_plan_ = n_;
    return;
  }
  const double lr = round.learning_rate;
  const bool have_l = !std::isnan(l_) && l_ > 0;
  const double eta = !std::isnan(lr) && lr > 0 ? lr : (have_l ? 1 / l_ : 1.0);
  double L = have_l ? l_ : 1 / eta;
  if (config_.floor_l && !std::isnan(l_floor_) && l_floor_ > 0) L = std::min(L, l_floor_);
  L *= config_.l_scale;
  eta_ = eta;
  double g2 = 1;
  double v = config_.noise;
  if (stats_seen_) {
    g2 = std::isnan(g2_) ? 0 : g2_;
    v = std::isnan(v_) ? 0 : v_;
  }
  model_ = ProgressModel::of(eta, L, g2, v);

  const int k_least = std::min(config_.k_min, n_);
  int best_k = n_;
  double best = 0;
  for (int k = k_least; k <= n_; ++k) {
    const double rate = model_.at(k) / std::max(window_.mean_order_stat(k), kTiny);
    if (rate > best) {
      best = rate;
      best_k = k;
    }
  }
  if (best <= 0 && config_.keep_plan && last_plan_ > 0) best_k = last_plan_;
  if (config_.step > 0 && last_plan_ > 0)
    best_k = std::clamp(best_k, std::max(k_least, last_plan_ - config_.step),
                        std::min(n_, last_plan_ + config_.step));
  if (config_.ratchet > 0) {
    if (static_cast<int>(plans_.size()) != n_ + 1) {
      plans_.assign(static_cast<std::size_t>(n_) + 1, 0);
      plan_count_ = 0;
    }
    if (plan_count_ > 0) {
      // The median of the earlier plans: the smallest k with at least half of them at or below.
      int median = n_;
      for (int k = 0, seen = 0; k <= n_; ++k) {
        seen += plans_[static_cast<std::size_t>(k)];
        if (2 * seen >= plan_count_) {
          median = k;
          break;
        }
      }
      // At least one above the median, so a factor near 1 cannot hold k where it is.
      const int cap = std::max({k_least, median + 1, static_cast<int>(config_.ratchet * median)});
      best_k = std::min(best_k, cap);
    }
    ++plans_[static_cast<std::size_t>(best_k)];
    ++plan_count_;
  }
  k_plan_ = best_k;
  last_plan_ = best_k;
  rate_ = best;
  if (config_.deadline)
    deadline_ = start_ + (1 + config_.grace) * std::max(window_.mean_order_stat(k_plan_), kTiny);
}

QuorumVerdict DbwQuorum::on_arrival(const Arrival& a) {
  m_ = std::max(m_ + 1, a.received);
  moments_.add(a);
  if (order_.size() < order_.capacity()) order_.push_back(a.worker);
  if (m_ >= n_) return QuorumVerdict::close;
  if (exploring_) return QuorumVerdict::wait;
  if (!config_.react) {
    if (m_ >= k_plan_) return QuorumVerdict::close;
    return past_tick_ && worth_closing(asked_worth_) ? QuorumVerdict::close : QuorumVerdict::wait;
  }
  return decide(a.time, false);
}

QuorumVerdict DbwQuorum::on_tick(double now) {
  if (exploring_ || !config_.deadline || m_ == 0) {
    deadline_ = kNever;  // an arrival re-decides
    return QuorumVerdict::wait;
  }
  if (!config_.react) {
    // The grace window ran out: close, but never on fewer than k_min results (the next
    // arrivals then close it as soon as there are enough), nor while the results in hand are
    // worth much less than the plan's (`worth`; then ask again after twice the time, for half).
    const int k_least = std::min(config_.k_min, n_);
    if (m_ >= k_least && worth_closing(asked_worth_)) return QuorumVerdict::close;
    if (m_ < k_least) {
      k_plan_ = k_least;
      deadline_ = kNever;
      return QuorumVerdict::wait;
    }
    past_tick_ = true;
    deadline_ = start_ + 2 * (now - start_);
    asked_worth_ /= 2;
    return QuorumVerdict::wait;
  }
  return decide(now, true);
}

bool DbwQuorum::worth_closing(double worth) const {
  return worth <= 0 || model_.at(m_) >= worth * model_.at(k_plan_);
}

QuorumVerdict DbwQuorum::decide(double now, bool from_tick) {
  const double tau = std::max(now - start_, kTiny);
  const ArrivalWindow::Tail tail = window_.tail_above(tau);
  const int k_least = std::min(config_.k_min, n_);
  if (!tail.any_above) {
    // Later than every time the window holds: nothing says when the rest will come. Close if
    // allowed; else give the stragglers a grace window and close at its tick.
    if (m_ >= k_least || from_tick) return QuorumVerdict::close;
    k_plan_ = k_least;
    deadline_ = config_.deadline ? start_ + (1 + config_.grace) * tau : kNever;
    return QuorumVerdict::wait;
  }
  // Renewal-reward stopping: the long-run progress per unit time is the plan's rate rho; closing
  // now nets dF(m) - rho tau, waiting for j nets dF(j) - rho E[T_(j) | seen]. The time already
  // spent is common to both and drops out; only the expected extra wait counts.
  const double now_net = model_.at(m_) - rate_ * tau;
  const int remaining = n_ - m_;
  double best = -kNever;
  int best_j = n_;
  double best_t = tau;
  for (int j = m_ + 1; j <= n_; ++j) {
    const double t = window_.conditional_order_stat(tail, tau, remaining, j - m_);
    const double net = model_.at(j) - rate_ * t;
    if (net > best) {
      best = net;
      best_j = j;
      best_t = t;
    }
  }
  if (m_ >= k_least && now_net >= best) return QuorumVerdict::close;
  k_plan_ = best_j;
  deadline_ = config_.deadline ? start_ + (1 + config_.grace) * best_t : kNever;
  return QuorumVerdict::wait;
}

void DbwQuorum::end(const RoundEnd& round) {
  window_.add_round(round.arrivals, round.start, round.closed_at, order_);
  update_estimates();
  deadline_ = kNever;
}

void DbwQuorum::update_estimates() {
  if (!moments_.has_stats()) return;
  stats_seen_ = true;
  const double v_round = moments_.variance();
  const double curvature = moments_.curvature();
  if (!config_.pooled) {
    // The paper's reading: the last round's estimates; V kept from an earlier round when this
    // one had a single result.
    if (!std::isnan(v_round)) v_ = v_round;
    g2_ = moments_.signal(std::isnan(v_) ? 0 : v_);
    if (!std::isnan(curvature)) l_ = curvature;
    return;
  }
  const double keep = 1 - 1 / std::max(config_.memory, 1.0);
  if (!std::isnan(v_round)) {
    const double w = moments_.variance_dof();
    v_num_ = keep * v_num_ + w * v_round;
    v_den_ = keep * v_den_ + w;
  }
  if (v_den_ > 0) v_ = v_num_ / v_den_;
  const double g2_round = moments_.signal(std::isnan(v_) ? 0 : v_);
  const double w = moments_.count();
  g_num_ = keep * g_num_ + w * g2_round;
  g_den_ = keep * g_den_ + w;
  g2_ = g_num_ / g_den_;
  if (!std::isnan(curvature)) {
    l_num_ = keep * l_num_ + curvature;
    l_den_ = keep * l_den_ + 1;
    l_ = l_num_ / l_den_;
  }
  // The stationary bound: SGD with k results and step eta cannot hold E[G^2] below
  // eta L_eff V / (2k) (on a quadratic, exactly that at stationarity, L_eff = tr(H Sigma) /
  // tr(Sigma)), so L_eff <= 2 k G^2 / (eta V) every round; the running minimum of its pooled
  // value bounds the noise's effective curvature from above, from the data, without a probe.
  if (config_.floor_l && v_ > 0 && eta_ > 0) {
    const double x = 2 * w * g2_round / (eta_ * v_);
    lf_num_ = keep * lf_num_ + x;
    lf_den_ = keep * lf_den_ + 1;
    ++lf_rounds_;
    const double pooled = lf_num_ / lf_den_;
    if (lf_rounds_ >= 3 && pooled > 0)
      l_floor_ = std::isnan(l_floor_) ? pooled : std::min(l_floor_, pooled);
  }
}

}  // namespace chorus
