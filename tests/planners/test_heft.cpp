#include <doctest/doctest.h>

#include "schedulers/planners/heft.hpp"

using namespace chorus;

// Topcuoglu, Hariri, Wu, "Performance-effective and low-complexity task scheduling for
// heterogeneous computing", IEEE TPDS 13(3), 2002: the 10-task, 3-processor example (Fig. 2) and
// its HEFT schedule (Fig. 4a), makespan 80.
TEST_CASE("Planners.Heft.ReproducesTheTextbookSchedule") {
  HeftProblem pb;
  pb.tasks = 10;
  pb.processors = 3;
  pb.cost = {14, 16, 9, 13, 19, 18, 11, 13, 19, 13, 8,  17, 12, 13, 10,
             13, 16, 9, 7,  15, 11, 5,  11, 14, 18, 12, 20, 21, 7,  16};
  // 1-based in the paper.
  auto e = [](std::size_t a, std::size_t b, double c) { return HeftEdge{a - 1, b - 1, c}; };
  pb.edges = {e(1, 2, 18), e(1, 3, 12), e(1, 4, 9),   e(1, 5, 11),  e(1, 6, 14),
              e(2, 8, 19), e(2, 9, 16), e(3, 7, 23),  e(4, 8, 27),  e(4, 9, 23),
              e(5, 9, 13), e(6, 8, 15), e(7, 10, 17), e(8, 10, 11), e(9, 10, 13)};
  const HeftSchedule s = heft_schedule(pb);

  const double ranks[] = {108, 77, 80, 80, 69, 63.333, 42.667, 35.667, 44.333, 14.667};
  for (std::size_t t = 0; t < 10; ++t) {
    CAPTURE(t + 1);
    CHECK(s.upward_rank[t] == doctest::Approx(ranks[t]).epsilon(1e-4));
  }
  const std::vector<std::size_t> order{0, 2, 3, 1, 4, 5, 8, 6, 7, 9};
  CHECK(s.order == order);  // T3 and T4 tie at 80: the lower index goes first
  // Processor (0-based P1..P3), start and finish of each task in the published schedule.
  struct Row {
    std::size_t proc;
    double start, finish;
  };
  const Row expected[] = {{2, 0, 9},   {0, 27, 40}, {2, 9, 28},  {1, 18, 26}, {2, 28, 38},
                          {1, 26, 42}, {2, 38, 49}, {0, 57, 62}, {1, 56, 68}, {1, 73, 80}};
  for (std::size_t t = 0; t < 10; ++t) {
    CAPTURE(t + 1);
    CHECK(s.processor[t] == expected[t].proc);
    CHECK(s.start[t] == doctest::Approx(expected[t].start));
    CHECK(s.finish[t] == doctest::Approx(expected[t].finish));
  }
  CHECK(s.makespan == doctest::Approx(80));
}

TEST_CASE("Planners.Heft.PlansAWorkflowOnAPlatform") {
  WorkflowGraph g;
  auto task = [&](const char* name, double seconds, std::vector<TaskId> after) {
    TaskSpec t;
    t.name = name;
    t.estimate = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
    t.after = std::move(after);
    return g.add(std::move(t));
  };
  task("a", 10, {});
  task("b", 20, {0});
  task("c", 20, {0});
  task("d", 10, {1, 2});
  Platform p{"two", {{"slow", 1.0, 1, 1, 1.0}, {"fast", 2.0, 1, 1, 4.0}}};
  PlanOptions opt;
  opt.deadline_s = 1000;
  auto plan = HeftPlanner(opt).plan(g, p);
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  // a on fast [0,5]; b fast [5,15]; c on slow [5,25] ends before fast could ([15,25] too, ties
  // go to the lower processor); d fast [25,30].
  CHECK(plan->makespan_s == doctest::Approx(30));
  CHECK(plan->type[0] == 1);
  CHECK(plan->type[3] == 1);
  CHECK(plan->deadline_met);
  CHECK(plan->cost == doctest::Approx(5 * 4 + 10 * 4 + 20 * 1 + 5 * 4));
}
