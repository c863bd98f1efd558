// Planning a live run: the platform of the run's nodes, and HEFT/SPWD plans turned into the
// TaskPlan the live policies follow.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/live_assignment.hpp"

using namespace chorus;

namespace {

TaskId add_task(WorkflowGraph& g, const std::string& name, double seconds,
                std::vector<TaskId> after = {}, int cores = 1) {
  TaskSpec t;
  t.name = name;
  t.kind = TaskKind::executable;
  t.cmd.argv = {"true"};
  t.per_rank = Resources{cores, 0, 0};
  t.estimate = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  t.after = std::move(after);
  return g.add(std::move(t));
}

// root -> {short, long -> long2 -> long3, mid}; all -> sink. HEFT ranks the long chain first.
WorkflowGraph diamond() {
  WorkflowGraph g;
  g.name = "diamond";
  TaskId root = add_task(g, "root", 1);
  TaskId s = add_task(g, "short", 1, {root});
  TaskId l1 = add_task(g, "long1", 4, {root});
  TaskId l2 = add_task(g, "long2", 4, {l1});
  TaskId l3 = add_task(g, "long3", 4, {l2});
  TaskId m = add_task(g, "mid", 2, {root});
  add_task(g, "sink", 1, {s, l3, m});
  return g;
}

NodeInfo node(const std::string& name, int cores) {
  return NodeInfo{name, Resources{cores, 0, 0}};
}

std::unique_ptr<GraphPlanner> planner(const std::string& name) {
  auto p = make_planner(name, PlanOptions{});
  REQUIRE(p.ok());
  return std::move(*p);
}

}  // namespace

TEST_CASE("Planners.LivePlan.NodesOfEqualCapacityFormOneType") {
  NodePlatform p = platform_of_nodes({node("a", 4), node("b", 8), node("c", 4)});
  REQUIRE(p.platform.types.size() == 2);
  CHECK(p.platform.types[0].name == "a");
  CHECK(p.platform.types[0].count == 2);
  CHECK(p.platform.types[0].cores == 4);
  CHECK(p.platform.types[0].speed == 1.0);
  CHECK(p.type_nodes[0] == std::vector<std::string>{"a", "c"});
  CHECK(p.platform.types[1].name == "b");
  CHECK(p.platform.types[1].count == 1);
  CHECK(p.type_nodes[1] == std::vector<std::string>{"b"});
  CHECK(validate_platform(p.platform).ok());
}

TEST_CASE("Planners.LivePlan.OptionsFromTheSchedulerSection") {
  SchedulerChoice c;
  CHECK(plan_options_of(c, 100).max_subgraph_size == PlanOptions{}.max_subgraph_size);
  CHECK_FALSE(plan_options_of(c, 100).deadline_s.has_value());
  c.planner_mss = 10;
  c.planner_mss_percent = true;
  CHECK(plan_options_of(c, 95).max_subgraph_size == 10);  // 9.5 rounded up
  CHECK(plan_options_of(c, 5).max_subgraph_size == 2);    // never below 2
  c.planner_mss_percent = false;
  c.planner_mss = 7;
  c.planner_deadline = std::chrono::minutes(2);
  CHECK(plan_options_of(c, 95).max_subgraph_size == 7);
  CHECK(plan_options_of(c, 95).deadline_s == doctest::Approx(120));
}

TEST_CASE("Planners.LivePlan.HeftOnOneCoreIsItsScheduleOrder") {
  WorkflowGraph g = diamond();
  auto live = plan_live_run(g, {node("n0", 1)}, *planner("heft"));
  REQUIRE(live.ok());
  CHECK(live->too_wide.empty());
  // On one core the plan is a sequence: positions must sort the tasks by planned start.
  std::vector<TaskId> by_position(g.tasks.size());
  for (const auto& t : g.tasks) {
    const PlannedTask* p = live->tasks.find(t.id);
    REQUIRE(p != nullptr);
    CHECK(p->nodes == std::vector<std::string>{"n0"});
    by_position[p->position] = t.id;
  }
  for (std::size_t i = 1; i < by_position.size(); ++i) {
    CHECK(live->plan.start_s[by_position[i - 1]] < live->plan.start_s[by_position[i]]);
  }
  // The long chain (highest upward rank) goes right after the root, before 'short' and 'mid',
  // which a FIFO run would start first.
  CHECK(g.tasks[by_position[0]].name == "root");
  CHECK(g.tasks[by_position[1]].name == "long1");
  CHECK(g.tasks[by_position.back()].name == "sink");
}

TEST_CASE("Planners.LivePlan.HeftProcessorsMapToTheirNodes") {
  WorkflowGraph g = diamond();
  auto live = plan_live_run(g, {node("a", 1), node("b", 1), node("c", 2)}, *planner("heft"));
  REQUIRE(live.ok());
  // Processors: a (type a, machine 0), b (type a, machine 1), c/0, c/1 (type c).
  const std::vector<std::string> proc_node{"a", "b", "c", "c"};
  std::vector<std::size_t> positions;
  for (const auto& t : g.tasks) {
    const PlannedTask* p = live->tasks.find(t.id);
    REQUIRE(p != nullptr);
    REQUIRE(p->nodes.size() == 1);
    CHECK(p->nodes[0] == proc_node[static_cast<std::size_t>(live->plan.processor[t.id])]);
    positions.push_back(p->position);
    // A topological order: every dependency comes earlier.
    for (TaskId d : t.after) CHECK(live->tasks.find(d)->position < p->position);
  }
  std::sort(positions.begin(), positions.end());
  for (std::size_t i = 0; i < positions.size(); ++i) CHECK(positions[i] == i);
  // Three independent branches on four processors: they run side by side, not on one node.
  std::vector<std::string> used;
  for (const auto& t : g.tasks) used.push_back(live->tasks.find(t.id)->nodes[0]);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  CHECK(used.size() >= 2);
}

TEST_CASE("Planners.LivePlan.EqualStartsGoByUpwardRank") {
  WorkflowGraph g;
  TaskId small = add_task(g, "small", 1);
  TaskId big = add_task(g, "big", 5);
  NodePlatform np = platform_of_nodes({node("n", 2)});
  Plan plan;
  plan.start_s = {0, 0};
  auto pos = plan_positions(g, np.platform, plan);
  CHECK(pos[big] == 0);
  CHECK(pos[small] == 1);
}

TEST_CASE("Planners.LivePlan.SpwdTypesMapToAllTheirNodes") {
  WorkflowGraph g = diamond();
  auto live = plan_live_run(g, {node("a", 2), node("b", 2), node("big", 8)}, *planner("spwd"));
  REQUIRE(live.ok());
  for (const auto& t : g.tasks) {
    const PlannedTask* p = live->tasks.find(t.id);
    REQUIRE(p != nullptr);
    const auto& expected = live->platform.type_nodes[live->plan.type[t.id]];
    CHECK(p->nodes == expected);
  }
}

TEST_CASE("Planners.LivePlan.RefusesTasksWithoutEstimates") {
  WorkflowGraph g = diamond();
  for (const char* name : {"short", "mid", "sink", "long2"}) {
    for (auto& t : g.tasks) {
      if (t.name == name) t.estimate = Duration::zero();
    }
  }
  auto live = plan_live_run(g, {node("n0", 1)}, *planner("heft"));
  REQUIRE_FALSE(live.ok());
  CHECK(live.status().code() == ErrorCode::invalid_argument);
  CHECK(live.status().message() ==
        "planner heft needs a runtime estimate for every task, and 'short', 'long2', 'mid' and 1 "
        "more have none: add 'estimate: 30s' (its expected runtime) to each task");
}

TEST_CASE("Planners.LivePlan.ServicesAndTooWideTasksAreLeftToRunAnywhere") {
  WorkflowGraph g = diamond();
  TaskSpec svc;
  svc.name = "svc";
  svc.kind = TaskKind::service;
  svc.per_rank = Resources{1, 0, 0};
  svc.service = 0;
  const TaskId service = g.add(svc);  // no estimate: not planned, so not an error
  ServiceSpec spec;
  spec.name = "svc";
  spec.replica_tasks = {service};
  g.services.push_back(spec);
  const TaskId wide = add_task(g, "wide", 3, {0}, /*cores=*/4);
  auto live = plan_live_run(g, {node("n0", 2), node("n1", 2)}, *planner("heft"));
  INFO(live.status().message());
  REQUIRE(live.ok());
  CHECK(live->tasks.find(service) == nullptr);
  CHECK(live->tasks.find(wide) == nullptr);
  CHECK(live->too_wide == std::vector<std::string>{"wide"});
  CHECK(live->tasks.find(0) != nullptr);
}

TEST_CASE("Planners.LivePlan.InfeasibleDeadlineIsAnError") {
  WorkflowGraph g = diamond();
  auto p = make_planner("heft", PlanOptions{.deadline_s = 3.0});
  REQUIRE(p.ok());
  auto live = plan_live_run(g, {node("n0", 4)}, **p);
  REQUIRE_FALSE(live.ok());
  CHECK(live.status().code() == ErrorCode::unsatisfiable);
  CHECK(
      live.status().message().starts_with("planner heft: infeasible: the fastest possible "
                                          "makespan is 14 s"));
}
