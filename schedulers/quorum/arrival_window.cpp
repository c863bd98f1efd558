#include "schedulers/quorum/arrival_window.hpp"

#include <algorithm>
#include <cmath>

namespace chorus {
namespace {

// Merges the sorted runs [a, a + na) and [b, b + nb) into out; the selection is a conditional
// move, not a branch.
void merge_runs(const double* a, int na, const double* b, int nb, double* out) {
  int i = 0, j = 0;
  while (i < na && j < nb) {
    const bool right = b[j] < a[i];
    *out++ = right ? b[j] : a[i];
    j += right;
    i += !right;
  }
  while (i < na) *out++ = a[i++];
  while (j < nb) *out++ = b[j++];
}

// Ascending sort of a few dozen doubles with few unpredictable branches (std::sort's partitions
// mispredict on random times: 2 us for 64 on the shared machine): insertion sort of blocks of 8,
// then bottom-up merges whose selection is a conditional move. `tmp` holds n.
void sort_times(double* x, double* tmp, int n) {
  constexpr int kBlock = 8;
  for (int s = 0; s < n; s += kBlock) {
    const int e = std::min(n, s + kBlock);
    for (int i = s + 1; i < e; ++i) {
      const double v = x[i];
      int j = i;
      while (j > s && x[j - 1] > v) {
        x[j] = x[j - 1];
        --j;
      }
      x[j] = v;
    }
  }
  for (int w = kBlock; w < n; w *= 2) {
    for (int s = 0; s < n; s += 2 * w) {
      const int m = std::min(n, s + w);
      const int e = std::min(n, s + 2 * w);
      merge_runs(x + s, m - s, x + m, e - m, tmp + s);
    }
    std::copy(tmp, tmp + n, x);
  }
}

}  // namespace

void ArrivalWindow::add_round(std::span<const double> arrivals, double start, double closed_at,
                              std::span<const int> order) {
  const int n = static_cast<int>(arrivals.size());
  if (n == 0) return;
  if (n != n_) {
    n_ = n;
    count_ = 0;
    head_ = 0;
    ring_.assign(window_, std::vector<double>(n, 0.0));
    rank_sum_.assign(n, 0.0);
    means_.assign(n, 0.0);
    batch_.resize(n);
    scratch_.resize(n);
    seen_.resize(n);
  }
  const double censor = std::max(0.0, closed_at - start);
  auto relative = [&](double t) { return std::isfinite(t) ? std::max(0.0, t - start) : censor; };
  // The seen ones first, in their (sorted) arrival order; then the late ones, sorted, merged in.
  std::fill(seen_.begin(), seen_.end(), 0);
  int m = 0;
  bool in_order = true;
  for (const int w : order) {
    if (w < 0 || w >= n || seen_[w] != 0 || m == n) {
      in_order = false;
      break;
    }
    seen_[w] = 1;
    batch_[m] = relative(arrivals[w]);
    in_order = in_order && (m == 0 || batch_[m - 1] <= batch_[m]);
    ++m;
  }
  if (!in_order) {
    for (int i = 0; i < n; ++i) batch_[i] = relative(arrivals[i]);
    sort_times(batch_.data(), scratch_.data(), n);
  } else {
    int late = m;
    for (int i = 0; i < n; ++i)
      if (seen_[i] == 0) batch_[late++] = relative(arrivals[i]);
    sort_times(batch_.data() + m, scratch_.data(), n - m);
    merge_runs(batch_.data(), m, batch_.data() + m, n - m, scratch_.data());
    std::copy(scratch_.begin(), scratch_.end(), batch_.begin());
  }

  if (impute_) impute_late(arrivals, censor);

  std::vector<double>& slot = ring_[head_];
  const bool evict = count_ == window_;
  for (int k = 0; k < n; ++k) {
    if (evict) rank_sum_[k] -= slot[k];
    rank_sum_[k] += batch_[k];
  }
  std::copy(batch_.begin(), batch_.end(), slot.begin());
  head_ = (head_ + 1) % window_;
  if (!evict) ++count_;
  const double inv = 1.0 / count_;
  double prev = 0;
  for (int k = 0; k < n; ++k) {
    // Rounding in the running sums must not unsort the means.
    means_[k] = std::max(prev, rank_sum_[k] * inv);
    prev = means_[k];
  }
  largest_ = 0;
  for (int r = 0; r < count_; ++r) largest_ = std::max(largest_, ring_[r].back());
  largest_ = std::max(largest_, means_[n - 1]);
}

void ArrivalWindow::impute_late(std::span<const double> arrivals, double censor) {
  int timed = 0;
  for (const double t : arrivals) timed += std::isfinite(t) ? 1 : 0;
  const int n = n_;
  // Only when every timed result came by the close (interrupt mode): then the untimed ones are
  // the sorted batch's top.
  if (timed == n || timed < 2 || batch_[timed - 1] > censor) return;
  // batch_ is sorted with the untimed ones (at `censor`, later than every timed one) on top.
  const double first = batch_[0];
  double spread = (n - timed) * (censor - first);
  for (int i = 0; i < timed; ++i) spread += batch_[i] - first;
  const double theta = spread / (timed - 1);
  double at = censor;
  for (int r = 0; r < n - timed; ++r) {
    at += theta / (n - timed - r);
    batch_[timed + r] = at;
  }
}

ArrivalWindow::Tail ArrivalWindow::tail_above(double tau) const {
  if (count_ == 0 || tau >= largest_) return {1, false};
  const double step = 1.0 / (n_ + 1);
  const auto it = std::upper_bound(means_.begin(), means_.end(), tau);
  const int k = static_cast<int>(it - means_.begin());  // knots at or below tau: 0..n
  const double lo_t = k == 0 ? 0 : means_[k - 1];
  const double hi_t = k == n_ ? largest_ : means_[k];
  const double frac = hi_t > lo_t ? (tau - lo_t) / (hi_t - lo_t) : 0;
  return {(k + frac) * step, true};
}

double ArrivalWindow::quantile(double p) const {
  const double x = std::clamp(p, 0.0, 1.0) * (n_ + 1);  // knot index: mu_k at k
  const int k = std::min(static_cast<int>(x), n_);
  const double frac = x - k;
  const double lo_t = k == 0 ? 0 : means_[k - 1];
  const double hi_t = k == n_ ? largest_ : means_[k];
  return lo_t + frac * (hi_t - lo_t);
}

double ArrivalWindow::conditional_order_stat(const Tail& tail, double tau, int remaining,
                                             int r) const {
  if (count_ == 0) return tau;
  const double p = tail.below + (1 - tail.below) * r / (remaining + 1.0);
  return std::max(tau, quantile(p));
}

}  // namespace chorus
