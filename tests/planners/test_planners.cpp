#include <doctest/doctest.h>

#include <chrono>

#include "support/planner_graphs.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/platform_reader.hpp"
#include "schedulers/planners/slack_reclaim.hpp"
#include "workflows/wfcommons_reader.hpp"

using namespace chorus;
using chorus::test::add;
using chorus::test::paper5;

namespace {

// The six-task DAG of the MILP test (not series-parallel: SP-ization adds a dependency).
WorkflowGraph six_tasks() {
  WorkflowGraph g;
  add(g, "t0", 10, {});
  add(g, "t1", 30, {0});
  add(g, "t2", 20, {0});
  add(g, "t3", 25, {1, 2});
  add(g, "t4", 40, {2});
  add(g, "t5", 15, {3, 4});
  return g;
}

Plan must_plan(const std::string& planner, const WorkflowGraph& g, const Platform& p,
               PlanOptions opt = {}) {
  auto made = make_planner(planner, opt);
  REQUIRE(made.ok());
  auto plan = (*made)->plan(g, p);
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  return std::move(plan).value();
}

}  // namespace

TEST_CASE("Planners.Deadline.DefaultsToCriticalPathAtMeanSpeed") {
  const auto g = six_tasks();
  // Critical path 10 + 20 + 40 + 15 = 85 s at speed 1; the mean speed is 1.5.
  CHECK(default_deadline(g, paper5()) == doctest::Approx(85 / 1.5));
  CHECK(fastest_makespan(g, paper5()) == doctest::Approx(42.5));
  const Plan plan = must_plan("spwd", g, paper5());
  CHECK(plan.deadline_s == doctest::Approx(85 / 1.5));
}

TEST_CASE("Planners.Deadline.RejectsOneBelowTheFastestMakespan") {
  PlanOptions opt;
  opt.deadline_s = 40;
  for (const char* name : {"heft", "spwd", "milp"}) {
    CAPTURE(name);
    auto planner = make_planner(name, opt);
    REQUIRE(planner.ok());
    auto plan = (*planner)->plan(six_tasks(), paper5());
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code() == ErrorCode::unsatisfiable);
    CHECK(plan.status().message().rfind("infeasible: the fastest possible makespan is 42.5 s", 0) ==
          0);
  }
}

TEST_CASE("Planners.Platform.RejectsBadPlatforms") {
  Platform empty{"none", {}};
  auto plan = (*make_planner("spwd", {}))->plan(six_tasks(), empty);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().message().find("no machine types") != std::string::npos);

  auto zero = parse_platform(
      "machine_types:\n  - {name: a, speed: 0, cores: 1, count: 1, price: 1}\n", "p.yaml");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message().find("speed must be > 0") != std::string::npos);
  auto typo = parse_platform("machine_types:\n  - {name: a, sped: 1}\n", "p.yaml");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().message().find(
            "unknown key 'sped' in machine type (did you mean 'speed'?)") != std::string::npos);
  auto ok = read_platform_file(std::string(CHORUS_SOURCE_DIR) + "/examples/platforms/paper5.yaml");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->types.size() == 5);
  CHECK(ok->types[4].price == doctest::Approx(4.0));
  CHECK(ok->mean_speed() == doctest::Approx(1.5));
  CHECK_FALSE(make_planner("magic", {}).ok());
}

TEST_CASE("Planners.Spwd.WholeGraphAsOnePieceMatchesTheMilpWhenSp") {
  // Diamond with a tail: already series-parallel, so with one piece SPWD solves the same WSP.
  WorkflowGraph g;
  add(g, "a", 10, {});
  add(g, "b", 30, {0});
  add(g, "c", 20, {0});
  add(g, "d", 25, {1, 2});
  add(g, "e", 40, {3});
  PlanOptions opt;
  opt.reclaim_slack = false;
  for (double deadline : {60.0, 70.0, 90.0, 120.0}) {
    CAPTURE(deadline);
    opt.deadline_s = deadline;
    const Plan whole = must_plan("milp", g, paper5(), opt);
    const Plan spwd = must_plan("spwd", g, paper5(), opt);
    CHECK(spwd.stats.pieces == 1);
    CHECK(spwd.cost == doctest::Approx(whole.cost));
    CHECK(spwd.deadline_met);
  }
}

TEST_CASE("Planners.Spwd.MeetsDeadlinesOnRealInstancesAndNeverBeatsTheOptimum") {
  const std::string dir = std::string(CHORUS_SOURCE_DIR) + "/../shared/data/wfcommons/";
  for (const char* f : {"srasearch-chameleon-10a-001.json", "blast-chameleon-small-001.json",
                        "cycles-chameleon-1l-1c-9p-001.json"}) {
    CAPTURE(f);
    auto inst = read_wfcommons_file(dir + f);
    REQUIRE(inst.ok());
    const auto& g = inst->graph;
    const Plan whole = must_plan("milp", g, paper5());
    REQUIRE(whole.stats.status == "optimal");
    CHECK(whole.deadline_met);
    for (double fraction : {0.25, 0.05}) {
      CAPTURE(fraction);
      PlanOptions opt;
      opt.max_subgraph_size =
          std::max<std::size_t>(2, static_cast<std::size_t>(fraction * g.tasks.size()));
      const Plan spwd = must_plan("spwd", g, paper5(), opt);
      CHECK(spwd.deadline_met);
      CHECK(spwd.makespan_s <= spwd.deadline_s * (1 + 1e-9));
      CHECK(spwd.stats.max_piece_size <= opt.max_subgraph_size);
      CHECK(spwd.stats.infeasible_pieces == 0);
      CHECK(spwd.cost >= whole.cost * (1 - 1e-9));  // the whole MILP is optimal
      CHECK(spwd.cost <= spwd.stats.merged_cost * (1 + 1e-12));
      const Plan heft = must_plan("heft", g, paper5());
      CHECK(heft.makespan_s <= whole.makespan_s * (1 + 1e-9));  // HEFT chases makespan
    }
  }
}

TEST_CASE("Planners.SlackReclaim.UsesSlackAndKeepsTheDeadline") {
  const auto g = six_tasks();
  const Platform p = paper5();
  std::vector<std::size_t> type(6, 4);  // everything on the fastest type: makespan 42.5
  const std::size_t moves = reclaim_slack(g, p, 60, type);
  CHECK(moves > 0);
  Plan plan;
  plan.type = type;
  plan.deadline_s = 60;
  REQUIRE(evaluate_plan(g, p, plan).ok());
  CHECK(plan.deadline_met);
  CHECK(plan.makespan_s > 42.5);
  CHECK(plan.cost < (10 + 30 + 20 + 25 + 40 + 15) / 2.0 * 4.0);
}
