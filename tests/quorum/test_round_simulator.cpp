// The straggler scenarios (scenario.hpp: determinism, the shapes' statistics against their
// formulas) and the round simulator (round_simulator.hpp: the event order of a round, what the
// policy is told, the modes, the target).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <doctest/doctest.h>

#include "schedulers/quorum/sgd/logistic_workload.hpp"
#include "schedulers/quorum/sgd/round_simulator.hpp"
#include "schedulers/quorum/sgd/scenario.hpp"
#include "schedulers/quorum/static_quorum.hpp"
#include "schedulers/quorum/wait_all.hpp"

namespace chorus::sgd {
namespace {

ScenarioParams params(Scenario s) {
  ScenarioParams p;
  p.scenario = s;
  return p;
}

double at(const std::vector<double>& v, int n, int it, int w) {
  return v[static_cast<std::size_t>(it) * static_cast<std::size_t>(n) +
           static_cast<std::size_t>(w)];
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Worker w's values over the iterations.
std::vector<double> column(const std::vector<double>& v, int n, int w) {
  std::vector<double> out;
  for (std::size_t i = static_cast<std::size_t>(w); i < v.size();
       i += static_cast<std::size_t>(n)) {
    out.push_back(v[i]);
  }
  return out;
}

TEST_CASE("Quorum.Scenario.NamesParseBothWays") {
  CHECK(parse_scenario("S0") == Scenario::none);
  CHECK(parse_scenario("s2") == Scenario::pareto);
  CHECK(parse_scenario("regime-switch") == Scenario::regime_switch);
  CHECK(parse_scenario("S7") == std::nullopt);
  CHECK(parse_scenario("paretoo") == std::nullopt);
  CHECK(scenario_name(Scenario::lr_step) == "S6 lr-step");
  for (int i = 0; i <= 6; ++i) {
    const auto s = static_cast<Scenario>(i);
    CHECK(parse_scenario(scenario_name(s).substr(0, 2)) == s);
    CHECK(parse_scenario(scenario_name(s).substr(3)) == s);
  }
}

TEST_CASE("Quorum.Scenario.DeterministicAndIndependentOfN") {
  for (int i = 0; i <= 6; ++i) {
    const ScenarioParams p = params(static_cast<Scenario>(i));
    const auto a = service_times(p, 8, 200, 42);
    CHECK(a == service_times(p, 8, 200, 42));
    if (i != 0) CHECK(a != service_times(p, 8, 200, 43));  // S0 has no randomness
    // The first 4 workers of n = 8 see what n = 4 sees (switch_at given: half of 200 for both).
    ScenarioParams fixed = p;
    fixed.switch_at = 100;
    const auto four = service_times(fixed, 4, 200, 42);
    const auto eight = service_times(fixed, 8, 200, 42);
    for (int it = 0; it < 200; ++it) {
      for (int w = 0; w < 4; ++w) REQUIRE(at(four, 4, it, w) == at(eight, 8, it, w));
    }
    for (double s : a) REQUIRE(s >= p.base_s);
  }
}

TEST_CASE("Quorum.Scenario.ShapesMatchTheirFormulas") {
  const int n = 16;
  const int its = 20'000;
  SUBCASE("S0 is the base time") {
    for (double s : service_times(params(Scenario::none), n, 100, 1)) CHECK(s == 0.01);
  }
  SUBCASE("S1 mean is base + tail") {
    const auto v = service_times(params(Scenario::shifted_exp), n, its, 1);
    CHECK(mean_of(v) == doctest::Approx(0.02).epsilon(0.01));
    // The exponential part: the median of base + Exp(tail) is base + tail ln 2.
    CHECK(median_of(v) == doctest::Approx(0.01 + 0.01 * std::log(2.0)).epsilon(0.01));
  }
  SUBCASE("S2 is Pareto alpha 1.5 x base") {
    const auto v = service_times(params(Scenario::pareto), n, its, 1);
    // Median base 2^(1/alpha); P(X > 10 base) = 10^-alpha. (The mean, 3 base, converges too
    // slowly for a test at alpha 1.5.)
    CHECK(median_of(v) == doctest::Approx(0.01 * std::pow(2.0, 1 / 1.5)).epsilon(0.01));
    const double tail =
        static_cast<double>(std::count_if(v.begin(), v.end(), [](double s) { return s > 0.1; })) /
        static_cast<double>(v.size());
    CHECK(tail == doctest::Approx(std::pow(10.0, -1.5)).epsilon(0.05));
  }
  SUBCASE("S3 bursts: stationary share and sticky runs") {
    const ScenarioParams p = params(Scenario::markov);
    const auto v = service_times(p, n, its, 1);
    const auto s1 = service_times(params(Scenario::shifted_exp), n, its, 1);
    // Same draws as S1, times slow_factor in the slow state: the state is readable.
    std::size_t slow = 0;
    std::size_t runs = 0;
    for (int w = 0; w < n; ++w) {
      bool was = false;
      for (int it = 0; it < its; ++it) {
        const double ratio = at(v, n, it, w) / at(s1, n, it, w);
        REQUIRE((std::abs(ratio - 1) < 1e-9 || std::abs(ratio - p.slow_factor) < 1e-9));
        const bool is = ratio > 2;
        slow += is ? 1 : 0;
        runs += (is && !was) ? 1 : 0;
        was = is;
      }
    }
    const double share = static_cast<double>(slow) / static_cast<double>(v.size());
    CHECK(share == doctest::Approx(p.burst_enter / (p.burst_enter + p.burst_leave)).epsilon(0.05));
    CHECK(static_cast<double>(slow) / static_cast<double>(runs) ==
          doctest::Approx(1 / p.burst_leave).epsilon(0.05));
  }
  SUBCASE("S4 two workers slow_factor x slower") {
    const ScenarioParams p = params(Scenario::two_slow);
    const auto v = service_times(p, n, its, 1);
    for (int w = 0; w < n; ++w) {
      const double m = mean_of(column(v, n, w));
      CHECK(m == doctest::Approx(w < 2 ? 0.08 : 0.02).epsilon(0.03));
    }
  }
  SUBCASE("S5 switches from S1 to S2 at switch_at") {
    ScenarioParams p = params(Scenario::regime_switch);
    p.switch_at = 0;  // half of the iterations
    const auto v = service_times(p, n, its, 1);
    const auto s1 = service_times(params(Scenario::shifted_exp), n, its, 1);
    const auto s2 = service_times(params(Scenario::pareto), n, its, 1);
    for (std::size_t i = 0; i < v.size(); ++i) {
      REQUIRE(v[i] == (i < v.size() / 2 ? s1[i] : s2[i]));
    }
    p.switch_at = 10;
    const auto early = service_times(p, n, 100, 1);
    CHECK(early[10 * n - 1] == service_times(params(Scenario::shifted_exp), n, 100, 1)[10 * n - 1]);
    CHECK(early[10 * n] == service_times(params(Scenario::pareto), n, 100, 1)[10 * n]);
  }
  SUBCASE("S6 has S1 delays and a learning-rate step") {
    ScenarioParams p = params(Scenario::lr_step);
    CHECK(service_times(p, n, 500, 3) == service_times(params(Scenario::shifted_exp), n, 500, 3));
    CHECK(learning_rate_at(p, 0.5, 49, 100) == 0.5);
    CHECK(learning_rate_at(p, 0.5, 50, 100) == doctest::Approx(0.05));
    p.switch_at = 10;
    CHECK(learning_rate_at(p, 0.5, 9, 100) == 0.5);
    CHECK(learning_rate_at(p, 0.5, 10, 100) == doctest::Approx(0.05));
    CHECK(learning_rate_at(params(Scenario::shifted_exp), 0.5, 99, 100) == 0.5);
  }
}

// A policy for the tests: closes at k results (like static) and records what it was told.
class Recorder final : public QuorumPolicy {
 public:
  explicit Recorder(int k, double deadline_after = kNever) : k_(k), after_(deadline_after) {}
  void begin(const RoundStart& r) override {
    starts.push_back(r);
    deadline_ = r.time + after_;
  }
  QuorumVerdict on_arrival(const Arrival& a) override {
    arrivals.push_back(a);
    return a.received >= k_ ? QuorumVerdict::close : QuorumVerdict::wait;
  }
  double deadline() const override { return deadline_; }
  QuorumVerdict on_tick(double now) override {
    ticks.push_back(now);
    deadline_ = kNever;
    return QuorumVerdict::close;
  }
  void end(const RoundEnd& r) override {
    ends.push_back(r);
    end_arrivals.emplace_back(r.arrivals.begin(), r.arrivals.end());
  }
  std::vector<RoundStart> starts;
  std::vector<Arrival> arrivals;
  std::vector<double> ticks;
  std::vector<RoundEnd> ends;
  std::vector<std::vector<double>> end_arrivals;

 private:
  int k_;
  double after_;
  double deadline_ = kNever;
};

std::unique_ptr<Workload> small_logistic() {
  return make_logistic({.dim = 20, .samples = 2000, .l2 = 1e-3, .seed = 5});
}

SimConfig small_config(Scenario s) {
  SimConfig c;
  c.n = 8;
  c.batch = 16;
  c.learning_rate = 0.2;
  c.scenario.scenario = s;
  c.max_iterations = 60;
  c.seed = 9;
  return c;
}

TEST_CASE("Quorum.RoundSimulator.InterruptRoundsCloseAtTheKthArrival") {
  auto wl = small_logistic();
  SimConfig c = small_config(Scenario::shifted_exp);
  c.overhead_s = 0.002;
  Recorder policy(3);
  auto r = simulate_rounds(*wl, policy, c);
  REQUIRE(r.ok());
  REQUIRE(r->iterations == 60);
  CHECK(r->mean_k == 3);
  const auto s = service_times(c.scenario, c.n, c.max_iterations, c.seed);
  double start = 0;
  std::size_t seen = 0;
  for (int t = 0; t < r->iterations; ++t) {
    std::vector<double> row(s.begin() + t * c.n, s.begin() + (t + 1) * c.n);
    std::sort(row.begin(), row.end());
    const RoundEnd& e = policy.ends[static_cast<std::size_t>(t)];
    CHECK(policy.starts[static_cast<std::size_t>(t)].time == doctest::Approx(start));
    CHECK(e.closed_at == doctest::Approx(start + row[2]));
    CHECK(e.used == 3);
    CHECK_FALSE(e.timed);
    // The late ones are censored; the received ones are there, in time order to the policy.
    const auto& arr = policy.end_arrivals[static_cast<std::size_t>(t)];
    CHECK(std::count_if(arr.begin(), arr.end(), [](double x) { return std::isinf(x); }) == 5);
    for (int i = 0; i < 3; ++i) {
      const Arrival& a = policy.arrivals[seen++];
      CHECK(a.received == i + 1);
      CHECK(a.time == doctest::Approx(start + row[static_cast<std::size_t>(i)]));
      CHECK(arr[static_cast<std::size_t>(a.worker)] == a.time);
      CHECK(std::isnan(a.curvature));
      if (i == 0) CHECK(a.sum_sq_norm == doctest::Approx(a.grad_sq_norm));
    }
    start = e.closed_at + c.overhead_s;
    CHECK(r->trace[static_cast<std::size_t>(t)].time == doctest::Approx(start));
    CHECK(r->trace[static_cast<std::size_t>(t)].k == 3);
  }
  // RoundStart carries the step, the batch and (from round 2) the received batches' loss only.
  CHECK(std::isnan(policy.starts[0].loss));
  CHECK(policy.starts[1].loss > 0);
  CHECK(policy.starts[1].learning_rate == 0.2);
  CHECK(policy.starts[1].batch == 16);
  // The loss went down: the gradients are real.
  CHECK(r->final_loss < r->trace.front().loss);
  CHECK(r->policy_calls == 60 * (1 + 3 + 1));
  CHECK(r->policy_seconds > 0);
}

TEST_CASE("Quorum.RoundSimulator.SameSeedSameRunAndPoliciesShareDelaysAndBatches") {
  auto wl = small_logistic();
  const SimConfig c = small_config(Scenario::pareto);
  WaitAllQuorum a;
  WaitAllQuorum b;
  auto ra = simulate_rounds(*wl, a, c);
  auto rb = simulate_rounds(*wl, b, c);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  for (std::size_t t = 0; t < ra->trace.size(); ++t) {
    REQUIRE(ra->trace[t].loss == rb->trace[t].loss);
    REQUIRE(ra->trace[t].time == rb->trace[t].time);
  }
  // k = n through static and through wait-all: the same weights, round after round.
  StaticQuorum all(8, false);
  auto rs = simulate_rounds(*wl, all, c);
  REQUIRE(rs.ok());
  CHECK(rs->final_loss == ra->final_loss);
  SimConfig other = c;
  other.seed = 10;
  WaitAllQuorum d;
  auto rd = simulate_rounds(*wl, d, other);
  REQUIRE(rd.ok());
  CHECK(rd->final_loss != ra->final_loss);
}

TEST_CASE("Quorum.RoundSimulator.TimedModeReportsLateWorkersAndDelaysTheirNextStart") {
  auto wl = small_logistic();
  SimConfig c = small_config(Scenario::pareto);
  c.mode = RoundMode::timed;
  Recorder policy(2);
  auto r = simulate_rounds(*wl, policy, c);
  REQUIRE(r.ok());
  const auto s = service_times(c.scenario, c.n, c.max_iterations, c.seed);
  std::vector<double> free_at(8, 0.0);
  int late_starts = 0;
  for (std::size_t t = 0; t < policy.ends.size(); ++t) {
    const RoundEnd& e = policy.ends[t];
    CHECK(e.timed);
    for (std::size_t i = 0; i < 8; ++i) {
      const double arr = policy.end_arrivals[t][i];
      REQUIRE(std::isfinite(arr));  // uncensored
      const double begin = std::max(e.start, free_at[i]);
      late_starts += free_at[i] > e.start ? 1 : 0;
      CHECK(arr == doctest::Approx(begin + s[t * 8 + i]));
      free_at[i] = std::max(arr, e.closed_at);
    }
  }
  CHECK(late_starts > 0);  // a heavy tail with k = 2 of 8 leaves workers busy past the close
}

TEST_CASE("Quorum.RoundSimulator.DeadlineTicksCloseTheRound") {
  auto wl = small_logistic();
  SimConfig c = small_config(Scenario::none);  // every result at start + 0.01
  c.max_iterations = 5;
  SUBCASE("a deadline before any result is a wait, the first result then closes nothing early") {
    Recorder policy(8, 0.005);
    auto r = simulate_rounds(*wl, policy, c);
    REQUIRE(r.ok());
    CHECK(policy.ticks.size() == 5);
    CHECK(r->mean_k == 8);  // ties: all arrive at 0.01, k = 8 closes
  }
  SUBCASE("a deadline after the first results closes there") {
    c.scenario.scenario = Scenario::shifted_exp;
    Recorder policy(8, 0.02);
    auto r = simulate_rounds(*wl, policy, c);
    REQUIRE(r.ok());
    for (const RoundEnd& e : policy.ends) {
      if (e.used < 8) CHECK(e.closed_at == doctest::Approx(e.start + 0.02));
    }
    CHECK(r->mean_k < 8);
  }
}

TEST_CASE("Quorum.RoundSimulator.CurvatureProbeAndS6StepAndErrors") {
  auto wl = small_logistic();
  SimConfig c = small_config(Scenario::lr_step);
  c.curvature_probe = true;
  c.max_iterations = 20;
  Recorder policy(4);
  auto r = simulate_rounds(*wl, policy, c);
  REQUIRE(r.ok());
  CHECK(std::isnan(policy.arrivals.front().curvature));  // round 1 has no previous weights
  CHECK(policy.arrivals.back().curvature > 0);
  CHECK(policy.starts[9].learning_rate == 0.2);
  CHECK(policy.starts[10].learning_rate == doctest::Approx(0.02));

  SimConfig bad = c;
  bad.n = 0;
  CHECK(simulate_rounds(*wl, policy, bad).status().message().find("workers") != std::string::npos);
  bad = c;
  bad.learning_rate = -1;
  CHECK_FALSE(simulate_rounds(*wl, policy, bad).ok());
}

TEST_CASE("Quorum.RoundSimulator.TargetLossAndTimeToIt") {
  auto wl = small_logistic();
  const LossTarget t = loss_target(*wl);
  CHECK(t.optimum < t.initial);
  CHECK(t.target == doctest::Approx(t.optimum + kDefaultTargetFraction * (t.initial - t.optimum)));
  // Cached: the same figures again.
  CHECK(loss_target(*wl).optimum == t.optimum);
  // F* is a minimum: a long wait-all run gets close to it but not below.
  SimConfig c = small_config(Scenario::shifted_exp);
  c.max_iterations = 400;
  WaitAllQuorum policy;
  auto r = simulate_rounds(*wl, policy, c);
  REQUIRE(r.ok());
  double best = 1e300;
  for (const RoundTrace& x : r->trace) best = std::min(best, x.loss);
  CHECK(best >= t.optimum - 1e-9);
  c.target_loss = t.target;
  WaitAllQuorum again;
  auto hit = simulate_rounds(*wl, again, c);
  REQUIRE(hit.ok());
  REQUIRE(hit->reached);
  CHECK(hit->iterations == hit->rounds_to_target);
  CHECK(hit->final_loss <= t.target);
  CHECK(hit->trace[hit->trace.size() - 2].loss > t.target);
  CHECK(hit->time_to_target == hit->trace.back().time);
}

}  // namespace
}  // namespace chorus::sgd
