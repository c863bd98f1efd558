// The estimators behind dbw, dbw+ and adasync against known answers: V and G^2 from gradients
// with a known mean and spread (GradientMoments), order statistics from known arrival times
// (ArrivalWindow).
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "schedulers/quorum/arrival_window.hpp"
#include "schedulers/quorum/gradient_moments.hpp"
#include "synthetic_rounds.hpp"

namespace chorus {
namespace {

GradientMoments moments_of(test::GradientSource& src, int m) {
  GradientMoments g;
  std::vector<double> sum(src.dim, 0.0);
  for (int i = 1; i <= m; ++i) {
    const auto x = src.draw();
    double gg = 0, ss = 0;
    for (int j = 0; j < src.dim; ++j) {
      gg += x[j] * x[j];
      sum[j] += x[j];
      ss += sum[j] * sum[j];
    }
    g.add({.worker = i - 1,
           .time = double(i),
           .received = i,
           .grad_sq_norm = gg,
           .sum_sq_norm = ss,
           .curvature = 2.0});
  }
  return g;
}

TEST_CASE("Quorum.GradientMoments.RecoverVarianceAndSignalFromManyResults") {
  test::GradientSource src{.dim = 50, .mean = 0.3, .sd = 0.8};
  const GradientMoments g = moments_of(src, 4000);
  const double v = g.variance();
  CHECK(v == doctest::Approx(src.variance()).epsilon(0.03));          // 32
  CHECK(g.signal(v) == doctest::Approx(src.signal()).epsilon(0.05));  // 4.5
  CHECK(g.curvature() == doctest::Approx(2.0));
}

TEST_CASE("Quorum.GradientMoments.AreUnbiasedAtSmallCounts") {
  // With m = 3 results per round, the round estimates are noisy but their mean over many rounds
  // is the truth (the property the pooled dbw+ estimates rest on).
  test::GradientSource src{.dim = 10, .mean = 0.5, .sd = 1.0};
  double v_sum = 0, g_sum = 0;
  const int rounds = 20000;
  for (int r = 0; r < rounds; ++r) {
    const GradientMoments g = moments_of(src, 3);
    v_sum += g.variance();
    g_sum += g.signal(g.variance());
  }
  CHECK(v_sum / rounds == doctest::Approx(src.variance()).epsilon(0.03));  // 10
  CHECK(g_sum / rounds == doctest::Approx(src.signal()).epsilon(0.08));    // 2.5
}

TEST_CASE("Quorum.GradientMoments.MissingStatisticsGiveNaN") {
  GradientMoments g;
  g.add({.worker = 0, .time = 1, .received = 1});
  g.add({.worker = 1, .time = 2, .received = 2});
  CHECK_FALSE(g.has_stats());
  CHECK(std::isnan(g.variance()));
  CHECK(std::isnan(g.signal(1.0)));
  GradientMoments one;
  one.add({.worker = 0, .time = 1, .received = 1, .grad_sq_norm = 4, .sum_sq_norm = 4});
  CHECK(std::isnan(one.variance()));  // one result says nothing of the spread
  CHECK(one.signal(1.0) == doctest::Approx(3.0));
}

TEST_CASE("Quorum.ProgressModel.IsTheDescentLemma") {
  const auto p = ProgressModel::of(0.1, 2.0, 3.0, 8.0);
  // eta G^2 - (L eta^2 / 2) (G^2 + V / k) at k = 4: 0.3 - 0.01 * (3 + 2) = 0.25
  CHECK(p.at(4) == doctest::Approx(0.25));
  CHECK(p.at(1) < p.at(2));
}

TEST_CASE("Quorum.ArrivalWindow.MeanOrderStatisticsOverTheWindow") {
  ArrivalWindow w(2);
  const std::vector<double> r1{13, 11, 12};  // relative to start 10: 3, 1, 2
  const std::vector<double> r2{22, 26, 24};  // start 20: 2, 6, 4
  const std::vector<double> r3{31, 32, 39};  // start 30: 1, 2, 9
  w.add_round(r1, 10, 13);
  CHECK(w.mean_order_stat(1) == doctest::Approx(1));
  CHECK(w.mean_order_stat(3) == doctest::Approx(3));
  w.add_round(r2, 20, 26);
  CHECK(w.mean_order_stat(2) == doctest::Approx(3));  // (2 + 4) / 2
  w.add_round(r3, 30, 39);                            // r1 leaves the window
  CHECK(w.rounds() == 2);
  CHECK(w.mean_order_stat(1) == doctest::Approx(1.5));  // (2 + 1) / 2
  CHECK(w.mean_order_stat(3) == doctest::Approx(7.5));  // (6 + 9) / 2
  CHECK(w.largest() == doctest::Approx(9));
  // The quantile function through (0, 0), (1/4, 1.5), (2/4, 3), (3/4, 7.5), (1, 9): 6.5 sits
  // 3.5 / 4.5 of the way from the second knot to the third.
  const auto tail = w.tail_above(6.5);
  CHECK(tail.below == doctest::Approx((2 + 3.5 / 4.5) / 4));
  CHECK(tail.any_above);
  CHECK_FALSE(w.tail_above(9).any_above);
}

TEST_CASE("Quorum.ArrivalWindow.CensoredTimesCountAtTheClose") {
  ArrivalWindow w(1);
  const std::vector<double> r{1, 2, kNever, kNever};
  w.add_round(r, 0, 2.5);
  CHECK(w.mean_order_stat(3) == doctest::Approx(2.5));
  CHECK(w.mean_order_stat(4) == doctest::Approx(2.5));
}

TEST_CASE("Quorum.ArrivalWindow.ImputesUntimedResultsUnderAnExponentialTail") {
  // Timed at 1 and 2, two untimed at the close 2.5: theta = ((2 - 1) + 2 (2.5 - 1)) / (2 - 1) = 4;
  // the two late ones expected at 2.5 + 4/2 = 4.5 and 4.5 + 4/1 = 8.5.
  ArrivalWindow w(1, true);
  const std::vector<double> r{1, 2, kNever, kNever};
  w.add_round(r, 0, 2.5);
  CHECK(w.mean_order_stat(2) == doctest::Approx(2));
  CHECK(w.mean_order_stat(3) == doctest::Approx(4.5));
  CHECK(w.mean_order_stat(4) == doctest::Approx(8.5));
  // Every result timed: nothing to impute.
  ArrivalWindow all(1, true);
  all.add_round(std::vector<double>{1, 2, 3, 4}, 0, 4);
  CHECK(all.mean_order_stat(4) == doctest::Approx(4));
}

TEST_CASE("Quorum.ArrivalWindow.ConditionalOrderStatisticsOfAUniform") {
  // Ten rounds of 100 times spread evenly on (0, 1): later than 0.5, one remaining worker is
  // expected at 0.75; of three remaining, the first at 0.625 and the last at 0.875.
  ArrivalWindow w(10);
  for (int r = 0; r < 10; ++r) {
    std::vector<double> t(100);
    for (int i = 0; i < 100; ++i) t[i] = (r + 10.0 * i + 0.5) / 1000.0;
    w.add_round(t, 0, 1);
  }
  const auto tail = w.tail_above(0.5);
  CHECK(w.conditional_order_stat(tail, 0.5, 1, 1) == doctest::Approx(0.75).epsilon(0.01));
  CHECK(w.conditional_order_stat(tail, 0.5, 3, 1) == doctest::Approx(0.625).epsilon(0.01));
  CHECK(w.conditional_order_stat(tail, 0.5, 3, 3) == doctest::Approx(0.875).epsilon(0.01));
  // Heavier conditioning moves it later, never before tau.
  const auto late = w.tail_above(0.99);
  CHECK(w.conditional_order_stat(late, 0.99, 1, 1) >= 0.99);
}

TEST_CASE("Quorum.ArrivalWindow.ANewRoundSizeRestartsTheWindow") {
  ArrivalWindow w(4);
  w.add_round(std::vector<double>{1, 2, 3}, 0, 3);
  w.add_round(std::vector<double>{1, 2}, 0, 2);
  CHECK(w.n() == 2);
  CHECK(w.rounds() == 1);
  CHECK(w.mean_order_stat(2) == doctest::Approx(2));
}

}  // namespace
}  // namespace chorus
