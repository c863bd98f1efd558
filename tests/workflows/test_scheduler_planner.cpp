// `scheduler: {planner: heft|spwd, mss: ..., deadline: ...}`: what the reader keeps, and the
// located errors for names and options it refuses.
#include <doctest/doctest.h>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::parse;

TEST_CASE("Workflows.SchedulerPlanner.ReadsPlannerAndItsPosition") {
  auto g = parse(R"Y(name: p
scheduler:
  planner: heft
tasks:
  - {name: a, command: [x], estimate: 3s}
)Y");
  REQUIRE(g.ok());
  CHECK(g->scheduler.planner == "heft");
  CHECK(g->scheduler.planner_line == 3);
  CHECK(g->scheduler.planner_column == 12);
  CHECK(g->scheduler.planner_mss == 0);
  CHECK(g->scheduler.planner_deadline == Duration::zero());
  CHECK(g->scheduler.queue.empty());
  CHECK(g->scheduler.placement.empty());
}

TEST_CASE("Workflows.SchedulerPlanner.SpwdTakesMssAndDeadline") {
  auto g = parse(R"Y(scheduler: {planner: spwd, mss: 12, deadline: 2m}
tasks:
  - {name: a, command: [x], estimate: 3s}
)Y");
  REQUIRE(g.ok());
  CHECK(g->scheduler.planner == "spwd");
  CHECK(g->scheduler.planner_mss == 12);
  CHECK_FALSE(g->scheduler.planner_mss_percent);
  CHECK(g->scheduler.planner_deadline == std::chrono::minutes(2));

  g = parse("scheduler: {planner: spwd, mss: 10%}\ntasks: [{name: a, command: [x]}]\n");
  REQUIRE(g.ok());
  CHECK(g->scheduler.planner_mss == 10);
  CHECK(g->scheduler.planner_mss_percent);

  g = parse("scheduler: {planner: heft, deadline: 90s}\ntasks: [{name: a, command: [x]}]\n");
  REQUIRE(g.ok());
  CHECK(g->scheduler.planner_deadline == std::chrono::seconds(90));
}

TEST_CASE("Workflows.SchedulerPlanner.UnknownPlannerListsTheKnownOnes") {
  std::string m = error_of("scheduler: {planner: hfet}\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m,
                 "wf.yaml:1:22: unknown planner 'hfet' in 'scheduler' (did you mean 'heft'?); "
                 "known: heft, spwd"));
  m = error_of("scheduler: {planner: milpx}\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:1:22: unknown planner 'milpx' in 'scheduler'; known: heft, spwd"));
}

TEST_CASE("Workflows.SchedulerPlanner.RefusesBadOptionsWithTheirPositions") {
  std::string m = error_of(R"Y(scheduler:
  planner: spwd
  mss: 1
  deadline: soon
tasks: [{name: a, command: [x]}]
)Y");
  CHECK(contains(m,
                 "wf.yaml:3:8: 'mss' in 'scheduler' must be a vertex count of at least 2 or a "
                 "percentage such as 10%, got '1'"));
  CHECK(contains(m, "wf.yaml:4:13: 'deadline' in 'scheduler'"));

  m = error_of("scheduler: {planner: spwd, mss: 150%}\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "got '150%'"));
  m = error_of("scheduler: {planner: spwd, mss: 2.5}\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "got '2.5'"));

  m = error_of("scheduler: {planner: heft, mss: 20}\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:1:28: 'mss' in 'scheduler' applies to 'planner: spwd' only"));

  m = error_of("scheduler: {deadline: 1h}\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:1:13: 'deadline' in 'scheduler' is an option of a planner"));
}

TEST_CASE("Workflows.SchedulerPlanner.ExcludesQueuePlacementAndWeights") {
  std::string m = error_of(R"Y(scheduler:
  placement: first-fit
  weights: {alice: 1}
  planner: heft
tasks: [{name: a, command: [x]}]
)Y");
  CHECK(contains(m, "wf.yaml:4:3: 'planner' cannot be combined with 'placement' in 'scheduler'"));
  CHECK(contains(m, "wf.yaml:4:3: 'planner' cannot be combined with 'weights' in 'scheduler'"));
  CHECK_FALSE(contains(m, "with 'queue'"));
}
