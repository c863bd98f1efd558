// ArrivalWindow: the arrival-time distribution of a round's n workers, estimated from the last
// `window` rounds (issue 15: the k-th order statistic E[T_(k)] that DBW divides by, and the
// conditional order statistics an in-round stopping rule needs).
//
// Times are relative to each round's start. A result the caller did not time (interrupted at the
// close, RoundEnd::arrivals kNever) is recorded at the close: a lower bound, so the estimate is
// optimistic about waiting for late workers and a policy that waits longer then learns the truth
// (the pessimistic choice, "never", would make a policy that closes early believe waiting is
// worthless and never learn otherwise). With `impute`, they get instead their expected times
// given that they were later than the close c, under an exponential tail whose scale is the
// censored-sample maximum-likelihood estimate from the round itself, theta = (sum over the u
// timed results of (t_i - t_1) + (n - u)(c - t_1)) / (u - 1): the r-th of the n - u late ones at
// c + theta (1/(n-u) + ... + 1/(n-u-r+1)). A round with another n than the window's restarts
// the window.
//
// The estimates:
//   mean_order_stat(k): mu_k, the window's mean of each round's k-th smallest arrival (unbiased
//     when the rounds are alike; with a window of 1, the last round's k-th arrival);
//   the distribution of one worker's time: the quantile function through the knots
//     (0, 0), (k / (n + 1), mu_k) for k = 1..n, (1, the window's latest time)
//     (E[X_(k:n)] ~ F^-1(k / (n + 1))), linear between knots;
//   conditional_order_stat: the r-th smallest of `remaining` workers known to be later than tau,
//     the workers taken i.i.d.: F^-1(F(tau) + (1 - F(tau)) r / (remaining + 1)).
// add_round costs O(n log n) (a branch-light sort of the round) plus O(n + window); the
// estimates O(1) and O(log n); no allocation after the first round of a given n. (A pooled
// sorted array of every time in the window was the first design: its merge cost 3-6 us per
// round at n = 64 with a window of 10 on the shared machine, over the 2 us budget.)
#pragma once

#include <span>
#include <vector>

namespace chorus {

class ArrivalWindow {
 public:
  // `impute`: a round's untimed results (interrupt mode) get their expected times under an
  // exponential tail fitted to the round's own arrivals, instead of the close (see add_round).
  explicit ArrivalWindow(int window_rounds, bool impute = false)
      : window_(window_rounds < 1 ? 1 : window_rounds), impute_(impute) {}

  // One round: `arrivals[i]` absolute (kNever when not timed), the round's start and close.
  // `order`: the workers whose results the policy saw, in arrival order (optional): their times
  // come sorted already, so only the late ones are sorted (cheaper when most were used).
  void add_round(std::span<const double> arrivals, double start, double closed_at,
                 std::span<const int> order = {});

  int rounds() const { return count_; }
  int n() const { return n_; }
  bool empty() const { return count_ == 0; }

  // k in 1..n(); needs rounds() > 0.
  double mean_order_stat(int k) const { return means_[k - 1]; }

  // Where tau sits in the estimated distribution: F(tau), and whether the distribution reaches
  // past tau (no: tau is later than every time in the window; nothing says when the rest come).
  struct Tail {
    double below = 0;
    bool any_above = false;
  };
  Tail tail_above(double tau) const;
  // The expected r-th (1-based) smallest of `remaining` workers all later than tau (Tail from
  // tail_above(tau)); never below tau.
  double conditional_order_stat(const Tail& tail, double tau, int remaining, int r) const;

  // The latest time in the window (0 when empty).
  double largest() const { return largest_; }

 private:
  double quantile(double p) const;
  void impute_late(std::span<const double> arrivals, double censor);

  int window_;
  bool impute_;
  int n_ = 0;
  int count_ = 0;
  int head_ = 0;                           // the slot the next round goes to
  std::vector<std::vector<double>> ring_;  // window_ rounds, each its n sorted relative times
  std::vector<double> rank_sum_;           // sum over the window of the k-th smallest
  std::vector<double> means_;              // rank_sum_ / count_
  double largest_ = 0;
  std::vector<double> batch_;
  std::vector<double> scratch_;
  std::vector<char> seen_;
};

}  // namespace chorus
