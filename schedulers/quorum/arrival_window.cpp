#include "schedulers/quorum/arrival_window.hpp"

#include <algorithm>
#include <cmath>

namespace chorus {

void ArrivalWindow::add_round(std::span<const double> arrivals, double start, double closed_at) {
  const int n = static_cast<int>(arrivals.size());
  if (n == 0) return;
  if (n != n_) {
    n_ = n;
    count_ = 0;
    head_ = 0;
    ring_.assign(window_, std::vector<double>(n, 0.0));
    rank_sum_.assign(n, 0.0);
    sorted_.clear();
    sorted_.reserve(static_cast<std::size_t>(window_) * n);
    scratch_.reserve(static_cast<std::size_t>(window_) * n);
    batch_.resize(n);
  }
  const double censor = std::max(0.0, closed_at - start);
  for (int i = 0; i < n; ++i) {
    const double t = arrivals[i];
    batch_[i] = std::isfinite(t) ? std::max(0.0, t - start) : censor;
  }
  std::sort(batch_.begin(), batch_.end());

  // The slot's old round (when the window is full) leaves the pool; the new one joins it. Both
  // are sorted, so one merge pass rebuilds the pooled order.
  std::vector<double>& slot = ring_[head_];
  const bool evict = count_ == window_;
  scratch_.clear();
  std::size_t old_i = 0;  // next element of the evicted round to skip
  std::size_t new_i = 0;
  for (double v : sorted_) {
    if (evict && old_i < slot.size() && v == slot[old_i]) {
      ++old_i;
      continue;
    }
    while (new_i < batch_.size() && batch_[new_i] < v) scratch_.push_back(batch_[new_i++]);
    scratch_.push_back(v);
  }
  while (new_i < batch_.size()) scratch_.push_back(batch_[new_i++]);
  sorted_.swap(scratch_);

  for (int k = 0; k < n; ++k) {
    if (evict) rank_sum_[k] -= slot[k];
    rank_sum_[k] += batch_[k];
  }
  std::copy(batch_.begin(), batch_.end(), slot.begin());
  head_ = (head_ + 1) % window_;
  if (!evict) ++count_;
}

ArrivalWindow::Tail ArrivalWindow::tail_above(double tau) const {
  if (sorted_.empty()) return {};
  const auto it = std::upper_bound(sorted_.begin(), sorted_.end(), tau);
  const auto below = static_cast<double>(it - sorted_.begin());
  return {below / static_cast<double>(sorted_.size()), it != sorted_.end()};
}

double ArrivalWindow::quantile(double p) const {
  // Linear interpolation between order statistics, sample i at level (i + 0.5) / size.
  const double size = static_cast<double>(sorted_.size());
  const double x = std::clamp(p * size - 0.5, 0.0, size - 1);
  const auto i = static_cast<std::size_t>(x);
  const double frac = x - static_cast<double>(i);
  if (i + 1 >= sorted_.size()) return sorted_.back();
  return sorted_[i] + frac * (sorted_[i + 1] - sorted_[i]);
}

double ArrivalWindow::conditional_order_stat(const Tail& tail, double tau, int remaining,
                                             int r) const {
  if (sorted_.empty()) return tau;
  const double p = tail.below + (1 - tail.below) * r / (remaining + 1.0);
  return std::max(tau, quantile(p));
}

}  // namespace chorus
