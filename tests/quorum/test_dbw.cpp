// dbw and dbw+ (schedulers/quorum/dbw_quorum.hpp, dbw_plus.hpp): k moves the right way with the
// gradient noise, the arrival tail and the step size; dbw+'s fixes (k_min, the deadline that
// closes a blocked round) do what they say; all fixes off is dbw; options are checked, located.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "schedulers/policy_registry.hpp"
#include "schedulers/quorum/dbw_plus.hpp"
#include "schedulers/quorum/dbw_quorum.hpp"
#include "synthetic_rounds.hpp"

namespace chorus {
namespace {

PolicyOptions options(std::vector<std::pair<std::string, std::string>> kv) {
  PolicyOptions o;
  int line = 3;
  for (auto& [k, v] : kv) {
    o.entries.push_back(
        {k, {"wf.yaml", line, 20}, {OptionValue::Kind::scalar, v, {}, {"wf.yaml", line, 23}}, {}});
    ++line;
  }
  return o;
}

std::unique_ptr<QuorumPolicy> make(const std::string& name,
                                   std::vector<std::pair<std::string, std::string>> kv = {}) {
  static const auto registry = PolicyRegistry::with_builtins();
  auto made = registry.make_quorum(name, options(std::move(kv)));
  REQUIRE(made.ok());
  return std::move(*made);
}

enum class Tail { light, exp, heavy };

std::vector<double> times_of(Tail tail, std::mt19937_64& rng, int n) {
  switch (tail) {
    case Tail::light:
      return test::shifted_exp(rng, n, 1.0, 0.05);
    case Tail::exp:
      return test::shifted_exp(rng, n, 1.0, 0.5);
    case Tail::heavy:
      return test::pareto(rng, n, 1.0, 1.2);
  }
  return {};
}

// The median k a policy used over rounds 11..60 of n = 16 (the first ten are warm-up).
int median_k(QuorumPolicy& p, double sd, Tail tail, double eta, std::uint64_t seed = 1) {
  test::GradientSource src{.dim = 20, .mean = 0.5, .sd = sd};
  src.rng.seed(seed);
  std::mt19937_64 rng(seed + 100);
  std::vector<int> ks;
  double t = 0;
  for (int r = 1; r <= 60; ++r) {
    const auto res = test::run_round(p, r, t, times_of(tail, rng, 16), &src, eta, 1.0);
    t = res.closed_at + 0.01;
    if (r > 10) ks.push_back(res.used);
  }
  std::nth_element(ks.begin(), ks.begin() + ks.size() / 2, ks.end());
  return ks[ks.size() / 2];
}

TEST_CASE("Quorum.Dbw.MoreGradientNoiseWaitsForMore") {
  for (const char* name : {"dbw", "dbw+"}) {
    CAPTURE(name);
    auto quiet = make(name);
    auto noisy = make(name);
    const int k_quiet = median_k(*quiet, 0.1, Tail::exp, 0.1);  // V = 0.2, G^2 = 5
    const int k_noisy = median_k(*noisy, 3.0, Tail::exp, 0.1);  // V = 180
    CHECK(k_quiet < k_noisy);
    CHECK(k_noisy >= 4);
  }
}

TEST_CASE("Quorum.Dbw.AHeavierTailWaitsForFewer") {
  for (const char* name : {"dbw", "dbw+"}) {
    CAPTURE(name);
    auto light = make(name);
    auto heavy = make(name);
    const int k_light = median_k(*light, 1.5, Tail::light, 0.1);
    const int k_heavy = median_k(*heavy, 1.5, Tail::heavy, 0.1);
    CHECK(k_heavy < k_light);
  }
}

TEST_CASE("Quorum.Dbw.ASmallerStepWaitsForFewer") {
  // The noise term of the expected decrease scales with eta^2, the signal with eta.
  for (const char* name : {"dbw", "dbw+"}) {
    CAPTURE(name);
    auto big = make(name);
    auto small = make(name);
    const int k_big = median_k(*big, 1.0, Tail::exp, 0.5);
    const int k_small = median_k(*small, 1.0, Tail::exp, 0.02);
    CHECK(k_small < k_big);
  }
}

TEST_CASE("Quorum.Dbw.TheFirstRoundUsesEveryResult") {
  auto p = make("dbw+");
  test::GradientSource src;
  std::mt19937_64 rng(3);
  const auto res = test::run_round(*p, 1, 0, times_of(Tail::heavy, rng, 16), &src);
  CHECK(res.used == 16);
}

TEST_CASE("Quorum.DbwPlus.NeverClosesOnOneResult") {
  // With almost no gradient noise dbw's rule wants k = 1; k_min keeps dbw+ at 2 or more.
  auto naive = make("dbw");
  auto plus = make("dbw+");
  CHECK(median_k(*naive, 0.01, Tail::exp, 0.1) == 1);
  test::GradientSource src{.dim = 20, .mean = 0.5, .sd = 0.01};
  std::mt19937_64 rng(5);
  double t = 0;
  for (int r = 1; r <= 40; ++r) {
    const auto res = test::run_round(*plus, r, t, times_of(Tail::exp, rng, 16), &src);
    CHECK(res.used >= 2);
    t = res.closed_at;
  }
}

TEST_CASE("Quorum.DbwPlus.TheDeadlineClosesARoundBlockedOnStragglers") {
  auto plus = make("dbw+");
  auto naive = make("dbw");
  test::GradientSource src{.dim = 20, .mean = 0.5, .sd = 2.0};
  test::GradientSource src2 = src;
  std::mt19937_64 rng(11);
  double t = 0;
  for (int r = 1; r <= 12; ++r) {
    const auto times = times_of(Tail::exp, rng, 16);
    test::run_round(*naive, r, t, times, &src2);
    t = test::run_round(*plus, r, t, times, &src).closed_at;
  }
  // Round 13: three answer quickly, the other 13 never do (a hung node).
  std::vector<double> blocked(16, kNever);
  blocked[0] = 1.0;
  blocked[1] = 1.05;
  blocked[2] = 1.1;
  const auto res = test::run_round(*plus, 13, t, blocked, &src);
  CHECK(res.used == 3);
  CHECK(res.ticks >= 1);
  CHECK(res.closed_at > t + 1.1);
  // Within a grace window of the latest time the window had seen (shifted exp: a few seconds).
  CHECK(res.closed_at < t + 20);

  // dbw plans at the round's start and asks for no tick: the same round stays blocked.
  naive->begin({.round = 13, .n = 16, .time = t, .learning_rate = 0.1});
  CHECK(naive->deadline() == kNever);
  int received = 0;
  for (double at : {1.0, 1.05, 1.1}) {
    ++received;
    naive->on_arrival({.worker = received - 1, .time = t + at, .received = received});
  }
  CHECK(naive->deadline() == kNever);
}

TEST_CASE("Quorum.DbwPlus.WorthKeepsATickFromClosingOnTooLittleButAHungRoundStillCloses") {
  // The same history for both; then round 13: three answer quickly, the other 13 never do.
  auto plain = make("dbw+");
  auto picky = make("dbw+", {{"worth", "0.99"}});
  test::GradientSource src{.dim = 20, .mean = 0.5, .sd = 2.0};
  test::GradientSource src2 = src;
  std::mt19937_64 rng(11);
  double t = 0;
  for (int r = 1; r <= 12; ++r) {
    const auto times = times_of(Tail::exp, rng, 16);
    test::run_round(*picky, r, t, times, &src2);
    t = test::run_round(*plain, r, t, times, &src).closed_at;
  }
  std::vector<double> blocked(16, kNever);
  blocked[0] = 1.0;
  blocked[1] = 1.05;
  blocked[2] = 1.1;
  const auto without = test::run_round(*plain, 13, t, blocked, &src);
  const auto with = test::run_round(*picky, 13, t, blocked, &src2);
  // Three results are worth far less than the plan's k: the first tick does not close, later
  // ticks ask half as much each, and the round still closes on the three it has.
  CHECK(without.used == 3);
  CHECK(with.used == 3);
  CHECK(with.ticks > without.ticks);
  CHECK(with.closed_at > without.closed_at);
  CHECK(with.closed_at < kNever);
}

TEST_CASE("Quorum.DbwPlus.EveryFixOffIsDbw") {
  auto naive = make("dbw");
  auto off = make("dbw+", {{"pool", "0"},
                           {"window", "1"},
                           {"k_min", "1"},
                           {"react", "0"},
                           {"deadline", "0"},
                           {"keep", "0"},
                           {"ratchet", "0"}});
  test::GradientSource a{.dim = 20, .mean = 0.5, .sd = 1.5};
  test::GradientSource b = a;
  std::mt19937_64 rng(21);
  double t = 0;
  int differing = 0;
  std::vector<int> ks;
  for (int r = 1; r <= 50; ++r) {
    const auto times = times_of(Tail::heavy, rng, 16);
    const auto x = test::run_round(*naive, r, t, times, &a);
    const auto y = test::run_round(*off, r, t, times, &b);
    differing += x.used != y.used;
    ks.push_back(x.used);
    t = x.closed_at;
  }
  CHECK(differing == 0);
  // And the rounds did vary k (the comparison is not of two constants).
  CHECK(*std::min_element(ks.begin(), ks.end()) < *std::max_element(ks.begin(), ks.end()));
}

// Past the signal (the gradient's mean gone to 0, only noise left), no k promises a decrease:
// dbw waits for all n then; dbw+ keeps the k it had. Rounds that used all 16, over the 60 rounds
// after the switch.
TEST_CASE("Quorum.DbwPlus.KeepsItsKWhenNoKPromisesADecrease") {
  auto all_of_them = [](std::vector<std::pair<std::string, std::string>> kv) {
    auto p = make("dbw+", std::move(kv));
    test::GradientSource src{.dim = 20, .mean = 0.5, .sd = 0.5};
    std::mt19937_64 rng(9);
    double t = 0;
    int everyone = 0;
    for (int r = 1; r <= 90; ++r) {
      if (r == 31) src.mean = 0;
      const auto res = test::run_round(*p, r, t, times_of(Tail::exp, rng, 16), &src, 0.1, 1.0);
      t = res.closed_at + 0.01;
      if (r > 30) everyone += res.used == 16;
    }
    return everyone;
  };
  // The ratchet off in both: it would cap the waits for all 16 by itself.
  const int waited = all_of_them({{"keep", "0"}, {"deadline", "0"}, {"ratchet", "0"}});
  const int kept = all_of_them({{"deadline", "0"}, {"ratchet", "0"}});
  MESSAGE("rounds on all 16 results: " << waited << " waiting, " << kept << " keeping the plan");
  CHECK(waited >= 10);
  CHECK(kept < waited / 2);
}

TEST_CASE("Quorum.DbwPlus.RatchetKeepsThePlanNearTheMedianOfItsEarlierPlans") {
  // A strong gradient for 30 rounds (the rule plans few results), then a weak one (the one-step
  // rule asks for ever more: the late-training ratchet). With `ratchet` r the plan never exceeds
  // max(k_min, m + 1, r m), m the median of the earlier plans (deadline 0: a round uses its plan;
  // the first round, which explores with all n, is not a plan).
  auto late_k = [](double ratchet, bool check_cap) {
    auto p = make("dbw+", {{"deadline", "0"}, {"ratchet", std::to_string(ratchet)}});
    test::GradientSource src{.dim = 20, .mean = 0.5, .sd = 1.0};
    std::mt19937_64 rng(5);
    std::vector<int> plans;
    double t = 0, late = 0;
    for (int r = 1; r <= 120; ++r) {
      if (r == 31) src.mean = 0.02;
      const auto res = test::run_round(*p, r, t, times_of(Tail::exp, rng, 16), &src, 0.1, 1.0);
      t = res.closed_at + 0.01;
      if (r == 1) continue;
      if (check_cap && !plans.empty()) {
        std::vector<int> sorted = plans;
        std::sort(sorted.begin(), sorted.end());
        const int m = sorted[(sorted.size() - 1) / 2];
        CHECK(res.used <= std::max({2, m + 1, static_cast<int>(ratchet * m)}));
      }
      plans.push_back(res.used);
      if (r > 60) late += res.used / 60.0;
    }
    return late;
  };
  const double free_k = late_k(0, false);
  const double held_k = late_k(1.25, true);
  MESSAGE("mean k over rounds 61-120: " << free_k << " without the ratchet, " << held_k
                                        << " with 1.25");
  CHECK(free_k > 10);
  CHECK(held_k < free_k - 3);
}

TEST_CASE("Quorum.DbwPlus.ReactsToTheArrivalsOfTheRound") {
  // Same warm-up on a heavy (Pareto) tail, then a round where every worker is 4x slower than
  // usual. Late in the round, the workers still out are expected later still (a Pareto tail's
  // conditional wait grows with the time already waited): dbw+ reacting inside the round closes
  // with fewer results than the plan it made at the round's start (react 0).
  auto plus = make("dbw+", {{"react", "1"}, {"deadline", "0"}});
  auto planned = make("dbw+", {{"react", "0"}, {"deadline", "0"}});
  test::GradientSource a{.dim = 20, .mean = 0.5, .sd = 3.0};  // V 180: k matters
  test::GradientSource b = a;
  std::mt19937_64 rng(31);
  double t = 0;
  for (int r = 1; r <= 15; ++r) {
    const auto times = times_of(Tail::heavy, rng, 16);
    test::run_round(*planned, r, t, times, &b);
    t = test::run_round(*plus, r, t, times, &a).closed_at;
  }
  std::vector<double> slow = times_of(Tail::heavy, rng, 16);
  for (double& x : slow) x *= 4;
  const int reacting = test::run_round(*plus, 16, t, slow, &a).used;
  const int fixed = test::run_round(*planned, 16, t, slow, &b).used;
  CHECK(fixed >= 4);
  CHECK(reacting < fixed);
}

TEST_CASE("Quorum.DbwPlus.OptionErrorsAreLocated") {
  const auto registry = PolicyRegistry::with_builtins();
  auto issues = registry.check_quorum("dbw+", {"wf.yaml", 2, 13}, options({{"k_min", "0"}}));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].at.format() == "wf.yaml:3:23");
  CHECK(issues[0].message ==
        "'k_min' of quorum policy 'dbw+' must be a whole number from 1 to 1000000, got 0");

  issues = registry.check_quorum("dbw+", {"wf.yaml", 2, 13},
                                 options({{"react", "2"}, {"window", "2.5"}}));
  REQUIRE(issues.size() == 2);  // every problem of the section, each at its value
  const bool react_first = issues[0].message.find("'react'") == 0;
  const OptionIssue& react = issues[react_first ? 0 : 1];
  const OptionIssue& window = issues[react_first ? 1 : 0];
  CHECK(react.at.format() == "wf.yaml:3:23");
  CHECK(react.message == "'react' of quorum policy 'dbw+' must be 0 (off) or 1 (on), got 2");
  CHECK(window.at.format() == "wf.yaml:4:23");
  CHECK(window.message.find("'window' of quorum policy 'dbw+' must be a whole number") == 0);

  issues = registry.check_quorum("dbw", {"wf.yaml", 2, 13}, options({{"k_min", "2"}}));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].message.find("quorum policy 'dbw' takes no option 'k_min' (dbw+ does)") == 0);

  issues = registry.check_quorum("dbw+", {"wf.yaml", 2, 13}, options({{"grace", "-1"}}));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].message ==
        "'grace' of quorum policy 'dbw+' must be a number from 0 to 1000, got -1");

  auto bad = registry.make_quorum("dbw+", options({{"memory", "0"}}), {}, {"wf.yaml", 2, 13});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("wf.yaml:3:23: 'memory' of quorum policy 'dbw+' must be") == 0);
}

}  // namespace
}  // namespace chorus
