// GradientMoments: one round's gradient statistics as the arrivals report them, and the
// estimators DBW-style policies read from them (issue 15).
//
// With m received gradients g_1..g_m of one round, each an unbiased estimate of grad F with
// per-worker variance V (the trace of the covariance: sigma^2 / B for a batch of B),
//   S = sum ||g_i||^2      (the sum of Arrival::grad_sq_norm)
//   Q = ||g_1 + ... + g_m||^2   (Arrival::sum_sq_norm of the latest arrival)
// satisfy E[S] = m (G^2 + V) and E[Q] = m^2 G^2 + m V, with G^2 = ||grad F||^2. Hence the
// unbiased estimators
//   V   = (S - Q / m) / (m - 1)        (m >= 2)
//   G^2 = Q / m^2 - V / m              (the squared norm of the mean, less its noise)
// and the smoothness L from the curvature probes' mean when the aggregator sends them.
// Plain arithmetic, no allocation: safe on the per-arrival path.
#pragma once

#include <cmath>

#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

class GradientMoments {
 public:
  void reset() { *this = GradientMoments(); }

  // One arrival (any order of workers). A missing statistic (NaN) in any arrival marks the
  // round as carrying none: the estimators then answer NaN.
  void add(const Arrival& a) {
    ++m_;
    if (std::isnan(a.grad_sq_norm) || std::isnan(a.sum_sq_norm)) {
      complete_ = false;
    } else {
      sum_sq_ += a.grad_sq_norm;
      sum_norm_sq_ = a.sum_sq_norm;
    }
    if (!std::isnan(a.curvature) && a.curvature >= 0) {
      curvature_sum_ += a.curvature;
      ++curvatures_;
    }
  }

  int count() const { return m_; }
  bool has_stats() const { return complete_ && m_ > 0; }
  bool has_curvature() const { return curvatures_ > 0; }

  // V from this round alone (NaN below 2 results or without statistics). Clamped at 0: a
  // negative value is rounding, not information.
  double variance() const {
    if (!has_stats() || m_ < 2) return kNoStat;
    const double m = m_;
    return std::max(0.0, (sum_sq_ - sum_norm_sq_ / m) / (m - 1));
  }
  // G^2 given a variance estimate `v` (this round's, or one pooled across rounds). May be
  // negative when the noise swamps the signal; the caller decides what that means.
  double signal(double v) const {
    if (!has_stats() || std::isnan(v)) return kNoStat;
    const double m = m_;
    return sum_norm_sq_ / (m * m) - v / m;
  }
  // ||mean of the received gradients||^2 (the step's actual squared length / eta^2).
  double mean_sq_norm() const {
    if (!has_stats()) return kNoStat;
    const double m = m_;
    return sum_norm_sq_ / (m * m);
  }
  double curvature() const { return has_curvature() ? curvature_sum_ / curvatures_ : kNoStat; }
  // The number of results the variance estimate rests on (its weight when pooling).
  int variance_dof() const { return has_stats() && m_ >= 2 ? m_ - 1 : 0; }

 private:
  int m_ = 0;
  bool complete_ = true;
  double sum_sq_ = 0;
  double sum_norm_sq_ = 0;
  double curvature_sum_ = 0;
  int curvatures_ = 0;
};

// The expected loss decrease of one step with the mean of k results, for a smooth loss (the
// descent lemma): E[F(w) - F(w - eta g_k)] >= eta G^2 - (L eta^2 / 2) E||g_k||^2 with
// E||g_k||^2 = G^2 + V / k. Written as a - c / k so a policy evaluates it for every k at the cost
// of a division.
struct ProgressModel {
  double a = 0;  // eta G^2 - (L eta^2 / 2) G^2
  double c = 0;  // (L eta^2 / 2) V

  static ProgressModel of(double eta, double L, double g2, double v) {
    const double half = L * eta * eta / 2;
    return {eta * g2 - half * g2, half * v};
  }
  double at(int k) const { return a - c / k; }
};

}  // namespace chorus
