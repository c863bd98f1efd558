// SPWD's deadline refinement (schedulers/planners/deadline_dp.hpp and its use in SpwdPlanner):
// the dynamic program on hand-made frames, and the planner on a workflow where the paper's
// proportional deadline split provably misses the optimum found by enumeration.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <set>

#include "support/planner_graphs.hpp"
#include "schedulers/planners/deadline_dp.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/sp_graph.hpp"
#include "schedulers/planners/sp_tree.hpp"
#include "workflows/wfcommons_reader.hpp"

using namespace chorus;
using chorus::test::add;
using chorus::test::paper5;

namespace {

// A wide level of four long tasks, a join that takes no time and one more long task. The paper's
// split gives the wide level and the last task deadlines in proportion to their mean runtimes
// (equal here) and leaves no slack to reclaim; the optimum slows the four wide tasks down and
// pays for it by running the single last task fast. (The join keeps the pieces from sharing a
// task with work: a shared task would be solved in each piece that holds it, see docs/spwd.md.)
WorkflowGraph wide_then_narrow() {
  WorkflowGraph g;
  std::vector<TaskId> wide;
  for (int i = 0; i < 4; ++i) wide.push_back(add(g, "a" + std::to_string(i), 10, {}));
  const TaskId j = add(g, "j", 0, wide);
  add(g, "b", 10, {j});
  return g;
}

// The cheapest assignment meeting the deadline, by trying all of them.
double enumerated_optimum(const WorkflowGraph& g, const Platform& p, double deadline) {
  Plan plan;
  plan.deadline_s = deadline;
  plan.type.assign(g.tasks.size(), 0);
  double best = HUGE_VAL;
  std::function<void(std::size_t)> walk = [&](std::size_t t) {
    if (t == g.tasks.size()) {
      REQUIRE(evaluate_plan(g, p, plan).ok());
      if (plan.deadline_met) best = std::min(best, plan.cost);
      return;
    }
    for (std::size_t m = 0; m < p.types.size(); ++m) {
      plan.type[t] = m;
      walk(t + 1);
    }
  };
  walk(0);
  return best;
}

Plan spwd(const WorkflowGraph& g, const Platform& p, bool refine, bool reclaim, std::size_t mss) {
  PlanOptions opt;
  opt.max_subgraph_size = mss;
  opt.refine_deadlines = refine;
  opt.reclaim_slack = reclaim;
  auto made = make_planner("spwd", opt);
  REQUIRE(made.ok());
  auto plan = (*made)->plan(g, p);
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  return std::move(plan).value();
}

SpwdFrame leaf(std::size_t piece) {
  SpwdFrame f;
  f.piece = piece;
  return f;
}

SpwdFrame inner(SpNodeKind kind, std::size_t left, std::size_t right) {
  SpwdFrame f;
  f.kind = kind;
  f.left = left;
  f.right = right;
  return f;
}

}  // namespace

TEST_CASE("Planners.SpwdDecomposition.FramesMirrorTheTreeAboveThePieces") {
  // a(1) -> b(2), a -> c(4), b -> d(3), c -> d, d -> e(5); at 3 vertices the pieces are the two
  // diamond branches (side by side) and the tail after d (in series with them).
  const SpGraph g = two_terminal({{}, {0}, {0}, {1, 2}, {3}});
  auto tree = decompose_sp(g);
  REQUIRE(tree.ok());
  const std::vector<double> w{1, 2, 4, 3, 5};
  assign_weights(*tree, g, w);
  auto dec = decompose_spwd(g, *tree, w, 26, 3);
  REQUIRE(dec.ok());
  REQUIRE(dec->pieces.size() == 3);
  const auto& f = dec->frames;
  REQUIRE(f.size() == 5);
  REQUIRE(f[0].kind == SpNodeKind::series);
  const SpwdFrame& branches = f[f[0].left];
  const SpwdFrame& tail = f[f[0].right];
  REQUIRE(branches.kind == SpNodeKind::parallel);
  REQUIRE(tail.kind == SpNodeKind::leaf);
  CHECK(dec->pieces[tail.piece].deadline == doctest::Approx(10));
  for (std::size_t side : {branches.left, branches.right}) {
    REQUIRE(f[side].kind == SpNodeKind::leaf);
    CHECK(dec->pieces[f[side].piece].deadline == doctest::Approx(16));
  }
  std::multiset<std::size_t> pieces;
  for (const auto& frame : f) {
    if (frame.kind == SpNodeKind::leaf) pieces.insert(frame.piece);
  }
  CHECK(pieces == std::multiset<std::size_t>{0, 1, 2});
}

TEST_CASE("Planners.DeadlineDp.SeriesTradesTimeWhereItIsWorthMost") {
  // Frame 0 = piece 0 ; piece 1. Proportional halves (5 + 5) would cost 10 + 10; giving piece 0
  // seven seconds and piece 1 three costs 4 + 12.
  const std::vector<SpwdFrame> frames{inner(SpNodeKind::series, 1, 2), leaf(0), leaf(1)};
  const std::vector<std::vector<PieceOption>> options{{{3, 30}, {5, 10}, {7, 4}},
                                                      {{3, 12}, {5, 10}, {7, 9}}};
  const auto choice = choose_piece_options(frames, options, 10, 1000);
  REQUIRE(choice.has_value());
  CHECK(choice->option == std::vector<std::size_t>{2, 0});
  CHECK(choice->cost == doctest::Approx(16));
  CHECK(choice->time == doctest::Approx(10));
  // Allotments add up to the deadline along the series and cover each chosen time.
  CHECK(choice->allotted[0] + choice->allotted[1] == doctest::Approx(10));
  CHECK(choice->allotted[0] >= 7);
  CHECK(choice->allotted[1] >= 3);
}

TEST_CASE("Planners.DeadlineDp.ParallelPartsShareTheDeadline") {
  // (piece 0 | piece 1) ; piece 2 within 10 s: both parallel parts get the same time.
  const std::vector<SpwdFrame> frames{inner(SpNodeKind::series, 1, 2),
                                      inner(SpNodeKind::parallel, 3, 4), leaf(2), leaf(0), leaf(1)};
  const std::vector<std::vector<PieceOption>> options{
      {{2, 20}, {6, 5}}, {{2, 20}, {6, 5}}, {{4, 8}, {8, 2}}};
  const auto choice = choose_piece_options(frames, options, 10, 1000);
  REQUIRE(choice.has_value());
  // 6 + 4: 5 + 5 + 8 = 18 beats 2 + 8: 20 + 20 + 2 = 42.
  CHECK(choice->option == std::vector<std::size_t>{1, 1, 0});
  CHECK(choice->cost == doctest::Approx(18));
  CHECK(choice->allotted[0] == doctest::Approx(choice->allotted[1]));
  CHECK(choice->allotted[0] + choice->allotted[2] == doctest::Approx(10));
}

TEST_CASE("Planners.DeadlineDp.NoChoiceWhenNothingMeetsTheDeadline") {
  const std::vector<SpwdFrame> frames{inner(SpNodeKind::series, 1, 2), leaf(0), leaf(1)};
  const std::vector<std::vector<PieceOption>> options{{{6, 1}}, {{5, 1}}};
  CHECK_FALSE(choose_piece_options(frames, options, 10, 1000).has_value());
  CHECK(choose_piece_options(frames, options, 11, 1000).has_value());
}

TEST_CASE("Planners.SpwdRefinement.ReachesTheEnumeratedOptimumThePaperMisses") {
  const auto g = wide_then_narrow();
  const Platform p = paper5();
  const double deadline = default_deadline(g, p);
  const double optimum = enumerated_optimum(g, p, deadline);
  for (std::size_t mss : {3, 4}) {
    CAPTURE(mss);
    const Plan paper = spwd(g, p, false, false, mss);
    const Plan reclaimed = spwd(g, p, false, true, mss);
    const Plan refined = spwd(g, p, true, false, mss);
    CHECK(paper.deadline_met);
    CHECK(paper.cost > optimum * 1.03);      // the proportional split misses it...
    CHECK(reclaimed.cost > optimum * 1.03);  // ...and leaves no slack to reclaim
    CHECK(refined.deadline_met);
    CHECK(refined.stats.chosen == "refined");
    CHECK(refined.cost == doctest::Approx(optimum));
    CHECK(refined.stats.merged_cost == doctest::Approx(paper.cost));  // the paper's figure kept
  }
}

TEST_CASE("Planners.SpwdRefinement.NeverCostsMoreAndKeepsTheDeadlineOnRealInstances") {
  const std::string dir = std::string(CHORUS_SOURCE_DIR) + "/../shared/data/wfcommons/";
  for (const char* f : {"srasearch-chameleon-10a-001.json", "cycles-chameleon-1l-1c-9p-001.json",
                        "seismology-chameleon-100p-001.json"}) {
    CAPTURE(f);
    auto inst = read_wfcommons_file(dir + f);
    REQUIRE(inst.ok());
    const auto& g = inst->graph;
    for (std::size_t mss : {std::size_t{3}, g.tasks.size() / 10, g.tasks.size() / 4}) {
      CAPTURE(mss);
      const Plan reclaimed = spwd(g, paper5(), false, true, mss);
      const Plan refined = spwd(g, paper5(), true, true, mss);
      CHECK(refined.deadline_met);
      CHECK(refined.makespan_s <= refined.deadline_s * (1 + 1e-9));
      CHECK(refined.cost <= reclaimed.cost * (1 + 1e-12));
      CHECK(refined.stats.reclaim_cost == doctest::Approx(reclaimed.cost));
      CHECK(refined.stats.merged_cost == doctest::Approx(reclaimed.stats.merged_cost));
    }
  }
}
