// Synthetic quorum rounds for the policy tests: gradients with a known mean and spread (so V and
// G^2 have known answers) and arrival times the test chooses, fed to a QuorumPolicy through its
// contract (begin, arrivals in time order, ticks at its deadline, end with every time).
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus::test {

// Worker gradients g_i = mu + sd * N(0, I) in `dim` dimensions: G^2 = ||mu||^2, V = dim sd^2.
struct GradientSource {
  int dim = 20;
  double mean = 0.5;  // every coordinate of mu
  double sd = 1.0;
  std::mt19937_64 rng{7};

  double signal() const { return dim * mean * mean; }
  double variance() const { return dim * sd * sd; }
  std::vector<double> draw() {
    std::normal_distribution<double> z(0, 1);
    std::vector<double> g(dim);
    for (double& x : g) x = mean + sd * z(rng);
    return g;
  }
};

struct RoundResult {
  int used = 0;
  double closed_at = 0;
  int ticks = 0;
};

// One round: worker i answers at start + times[i] (kNever: never). Gradients from `source` (or
// none when null). Ticks are taken whenever the policy's deadline comes before the next arrival.
inline RoundResult run_round(QuorumPolicy& policy, int round, double start,
                             const std::vector<double>& times, GradientSource* source,
                             double eta = 0.1, double curvature = 1.0, double loss = kNoStat) {
  const int n = static_cast<int>(times.size());
  policy.begin({.round = round, .n = n, .time = start, .learning_rate = eta, .loss = loss});
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return times[a] < times[b]; });
  std::vector<double> sum(source ? source->dim : 0, 0.0);
  RoundResult r;
  int received = 0;
  bool closed = false;
  for (int w : order) {
    const double at = start + times[w];
    while (!closed && received > 0 && policy.deadline() < at && r.ticks < 10000) {
      const double now = policy.deadline();
      ++r.ticks;
      if (policy.on_tick(now) == QuorumVerdict::close) {
        closed = true;
        r.closed_at = now;
      }
    }
    if (closed || !std::isfinite(at)) break;
    Arrival a{.worker = w, .time = at, .received = ++received};
    if (source) {
      const std::vector<double> g = source->draw();
      double gg = 0;
      double ss = 0;
      for (std::size_t j = 0; j < g.size(); ++j) {
        gg += g[j] * g[j];
        sum[j] += g[j];
        ss += sum[j] * sum[j];
      }
      a.grad_sq_norm = gg;
      a.sum_sq_norm = ss;
      a.curvature = curvature;
    }
    if (policy.on_arrival(a) == QuorumVerdict::close || received == n) {
      closed = true;
      r.closed_at = at;
    }
  }
  // A round blocked with some results: tick until the policy closes it (the caller's loop).
  while (!closed && received > 0 && std::isfinite(policy.deadline()) && r.ticks < 10000) {
    const double now = policy.deadline();
    ++r.ticks;
    if (policy.on_tick(now) == QuorumVerdict::close) {
      closed = true;
      r.closed_at = now;
    }
  }
  r.used = received;
  std::vector<double> arrivals(n);
  for (int i = 0; i < n; ++i) arrivals[i] = start + times[i];  // timed mode: every time known
  policy.end({.round = round,
              .start = start,
              .closed_at = r.closed_at,
              .used = r.used,
              .arrivals = arrivals,
              .timed = true});
  return r;
}

// n service times of a shifted exponential (base + Exp(mean tail)) or a Pareto (base x
// Pareto(alpha)).
inline std::vector<double> shifted_exp(std::mt19937_64& rng, int n, double base, double tail) {
  std::exponential_distribution<double> e(1 / tail);
  std::vector<double> t(n);
  for (double& x : t) x = base + e(rng);
  return t;
}
inline std::vector<double> pareto(std::mt19937_64& rng, int n, double base, double alpha) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> t(n);
  for (double& x : t) x = base * std::pow(1 - u(rng), -1 / alpha);
  return t;
}

}  // namespace chorus::test
