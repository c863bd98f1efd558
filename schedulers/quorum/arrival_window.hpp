// ArrivalWindow: the arrival-time distribution of a round's n workers, estimated from the last
// `window` rounds (issue 15: the k-th order statistic E[T_(k)] that DBW divides by, and the
// conditional order statistics an in-round stopping rule needs).
//
// Times are relative to each round's start. A result the caller did not time (interrupted at the
// close, RoundEnd::arrivals kNever) is recorded at the close: a lower bound, so the estimate is
// optimistic about waiting for late workers and a policy that waits longer then learns the truth
// (the pessimistic choice, "never", would make a policy that closes early believe waiting is
// worthless and never learn otherwise). A round with another n than the window's restarts the
// window.
//
// Two estimates:
//   mean_order_stat(k): the window's mean of each round's k-th smallest arrival (unbiased when
//     the rounds are alike; with a window of 1 it is the last round's k-th arrival);
//   conditional_order_stat: the r-th smallest of `remaining` workers known to be later than tau,
//     the workers taken i.i.d. from the window's pooled times: the quantile
//     F^-1(F(tau) + (1 - F(tau)) r / (remaining + 1)) of the pooled empirical distribution.
// add_round costs O(window n) (a merge), the estimates O(1) and O(log(window n)); no allocation
// after the first round of a given n.
#pragma once

#include <span>
#include <vector>

namespace chorus {

class ArrivalWindow {
 public:
  explicit ArrivalWindow(int window_rounds) : window_(window_rounds < 1 ? 1 : window_rounds) {}

  // One round: `arrivals[i]` absolute (kNever when not timed), the round's start and close.
  void add_round(std::span<const double> arrivals, double start, double closed_at);

  int rounds() const { return count_; }
  int n() const { return n_; }
  bool empty() const { return count_ == 0; }

  // k in 1..n(); needs rounds() > 0.
  double mean_order_stat(int k) const { return rank_sum_[k - 1] / count_; }

  // Where tau sits in the pooled distribution: the fraction of pooled times <= tau, and whether
  // any pooled time lies above it (none: nothing seen says when the late workers come).
  struct Tail {
    double below = 0;
    bool any_above = false;
  };
  Tail tail_above(double tau) const;
  // The expected r-th (1-based) smallest of `remaining` workers all later than tau (Tail from
  // tail_above(tau)); never below tau.
  double conditional_order_stat(const Tail& tail, double tau, int remaining, int r) const;

  // The largest pooled time (0 when empty).
  double largest() const { return sorted_.empty() ? 0 : sorted_.back(); }

 private:
  double quantile(double p) const;

  int window_;
  int n_ = 0;
  int count_ = 0;
  int head_ = 0;                           // the slot the next round goes to
  std::vector<std::vector<double>> ring_;  // window_ rounds, each its n sorted relative times
  std::vector<double> rank_sum_;           // sum over the window of the k-th smallest
  std::vector<double> sorted_;             // the window's times pooled, ascending
  std::vector<double> scratch_;
  std::vector<double> batch_;
};

}  // namespace chorus
