// adasync (schedulers/quorum/adasync_quorum.hpp): K grows as the loss falls, never shrinks while
// monotone, follows the estimated error floor; options are checked, located.
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "schedulers/policy_registry.hpp"
#include "schedulers/quorum/adasync_quorum.hpp"
#include "synthetic_rounds.hpp"

namespace chorus {
namespace {

TEST_CASE("Quorum.AdaSync.KGrowsAsTheLossFalls") {
  AdaSyncQuorum p({.k0 = 1, .floor = 1.0});
  test::GradientSource src;
  std::mt19937_64 rng(2);
  double t = 0;
  double loss = 20;
  std::vector<int> ks;
  for (int r = 1; r <= 40; ++r) {
    const auto times = test::shifted_exp(rng, 16, 1.0, 0.5);
    const auto res = test::run_round(p, r, t, times, &src, 0.1, 1.0, loss);
    ks.push_back(res.used);
    t = res.closed_at;
    loss *= 0.9;  // 20 -> 0.3: below the floor of small K
  }
  CHECK(ks[0] == 16);  // the calibration round
  CHECK(ks[1] <= 3);   // far above every floor: the fastest K wins
  for (std::size_t i = 2; i < ks.size(); ++i) CHECK(ks[i] >= ks[i - 1]);
  CHECK(ks.back() >= 8);
}

TEST_CASE("Quorum.AdaSync.EstimatesTheFloorFromTheFirstRound") {
  AdaSyncQuorum p({});
  test::GradientSource src{.dim = 20, .mean = 0.5, .sd = 1.0};  // G^2 5, V 20
  std::mt19937_64 rng(4);
  test::run_round(p, 1, 0, test::shifted_exp(rng, 16, 1.0, 0.5), &src, 0.1, 2.0, 3.0);
  // A = eta L V e / G^2 = 0.1 * 2 * 20 * 3 / 5 = 2.4 (estimates from 16 results: within 40%).
  CHECK(p.floor_estimate() == doctest::Approx(2.4).epsilon(0.4));
}

TEST_CASE("Quorum.AdaSync.WithoutALossKStaysAtK0") {
  AdaSyncQuorum p({.k0 = 5});
  std::mt19937_64 rng(6);
  double t = 0;
  for (int r = 1; r <= 5; ++r) {
    const auto res = test::run_round(p, r, t, test::shifted_exp(rng, 16, 1.0, 0.5), nullptr);
    CHECK(res.used == (r == 1 ? 16 : 5));
    t = res.closed_at;
  }
}

TEST_CASE("Quorum.AdaSync.OptionErrorsAreLocated") {
  const auto registry = PolicyRegistry::with_builtins();
  PolicyOptions o;
  o.entries.push_back(
      {"k0", {"wf.yaml", 5, 20}, {OptionValue::Kind::scalar, "1.5", {}, {"wf.yaml", 5, 24}}, {}});
  const auto issues = registry.check_quorum("adasync", {"wf.yaml", 4, 13}, o);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].at.format() == "wf.yaml:5:24");
  CHECK(issues[0].message ==
        "'k0' of quorum policy 'adasync' must be a whole number from 1 to 1000000, got 1.5");
}

}  // namespace
}  // namespace chorus
