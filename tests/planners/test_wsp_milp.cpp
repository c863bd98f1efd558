#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "schedulers/planners/wsp_milp.hpp"

using namespace chorus;

namespace {

// Six tasks: 0 -> {1, 2}, 1 -> 3, 2 -> {3, 4}, {3, 4} -> 5; three types (speed 1, 1.5, 2,
// price = speed^2).
WspInstance six_tasks(double deadline) {
  WspInstance inst;
  inst.runtime = {10, 30, 20, 25, 40, 15};
  inst.preds = {{}, {0}, {0}, {1, 2}, {2}, {3, 4}};
  inst.speed = {1.0, 1.5, 2.0};
  inst.price = {1.0, 2.25, 4.0};
  inst.deadline = deadline;
  return inst;
}

// The optimum by trying all 3^6 assignments.
double enumerate_optimum(const WspInstance& inst, std::vector<std::size_t>& best_type) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> type(inst.vertices(), 0);
  const std::size_t total = static_cast<std::size_t>(std::pow(3, inst.vertices()));
  for (std::size_t code = 0; code < total; ++code) {
    std::size_t c = code;
    for (auto& t : type) {
      t = c % 3;
      c /= 3;
    }
    if (wsp_makespan(inst, type) > inst.deadline + 1e-9) continue;
    const double cost = wsp_cost(inst, type);
    if (cost < best - 1e-9) {
      best = cost;
      best_type = type;
    }
  }
  return best;
}

}  // namespace

TEST_CASE("Planners.WspMilp.MatchesEnumerationOnSixTasks") {
  // Between the all-fastest makespan (42.5) and the all-slowest one (85) and beyond.
  for (double deadline : {47.5, 55.0, 62.0, 70.0, 80.0, 95.0}) {
    CAPTURE(deadline);
    const auto inst = six_tasks(deadline);
    std::vector<std::size_t> expected_type;
    const double optimum = enumerate_optimum(inst, expected_type);
    REQUIRE(std::isfinite(optimum));
    for (auto f : {WspFormulation::paths, WspFormulation::start_times}) {
      CAPTURE(to_string(f));
      WspMilpOptions opt;
      opt.formulation = f;
      opt.time_limit_s = 60;
      const auto res = solve_wsp_milp(inst, opt);
      REQUIRE(res.outcome == WspOutcome::optimal);
      CHECK(res.formulation == f);
      CHECK(res.cost == doctest::Approx(optimum));
      CHECK(wsp_makespan(inst, res.type) <= deadline + 1e-6);
    }
  }
}

TEST_CASE("Planners.WspMilp.ReportsInfeasibleDeadline") {
  const auto inst = six_tasks(40);  // the all-fastest critical path is 42.5
  const auto res = solve_wsp_milp(inst, {});
  CHECK(res.outcome == WspOutcome::infeasible);
}

TEST_CASE("Planners.WspMilp.CountsPaths") {
  CHECK(count_paths(six_tasks(100)) == 3);  // 0-1-3-5, 0-2-3-5, 0-2-4-5
}
