// The live policies that follow a graph planner's plan: PlanOrderQueue (release order) and
// PlannedPlacement (only on the planned node).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "schedulers/placement/planned_placement.hpp"
#include "schedulers/queue/plan_order_queue.hpp"

using namespace chorus;

namespace {

// Nodes by name with `cores` cores each (all free), tasks by id, and a plan over them.
struct PlanHarness {
  explicit PlanHarness(std::vector<std::pair<std::string, int>> spec) {
    for (auto& [name, cores] : spec) infos.push_back(NodeInfo{name, Resources{cores, 0, 0}});
    for (const auto& info : infos) views.push_back(NodeView{&info, info.capacity, 0});
    plan = std::make_shared<TaskPlan>();
  }
  // A task of `cores` cores planned at `position` on `nodes` (none: not covered by the plan).
  TaskId add(int cores, std::size_t position, std::vector<std::string> nodes) {
    TaskSpec t;
    t.id = static_cast<TaskId>(tasks.size());
    t.name = "t" + std::to_string(t.id);
    t.per_rank = Resources{cores, 0, 0};
    tasks.push_back(t);
    PlannedTask p;
    p.covered = !nodes.empty();
    p.position = position;
    p.nodes = std::move(nodes);
    plan->tasks.push_back(std::move(p));
    return t.id;
  }
  std::optional<TaskId> next(QueuePolicy& q) {
    ClusterView c{std::span<const NodeView>(views.data(), views.size()), TimePoint{}};
    return q.next(c);
  }
  // Starts `id` on node `node` (taking its cores).
  void start(QueuePolicy& q, TaskId id, std::size_t node) {
    q.on_start(tasks[id], TimePoint{});
    views[node].free -= tasks[id].total();
    views[node].running += 1;
  }
  std::vector<NodeInfo> infos;  // reserved up front: views point into it
  std::vector<NodeView> views;
  std::vector<TaskSpec> tasks;
  std::shared_ptr<TaskPlan> plan;
};

}  // namespace

TEST_CASE("Schedulers.PlanOrderQueue.ReleasesByPlanPositionNotReadiness") {
  PlanHarness h({{"n0", 4}});
  TaskId a = h.add(1, 2, {"n0"});
  TaskId b = h.add(1, 0, {"n0"});
  TaskId c = h.add(1, 1, {"n0"});
  PlanOrderQueue q(h.plan);
  CHECK(q.name() == "plan-order");
  for (TaskId id : {a, b, c}) q.on_ready(h.tasks[id], TimePoint{});
  CHECK(q.size() == 3);
  std::vector<TaskId> started;
  while (auto id = h.next(q)) {
    started.push_back(*id);
    h.start(q, *id, 0);
  }
  CHECK(started == std::vector<TaskId>{b, c, a});
  CHECK(q.size() == 0);
}

TEST_CASE("Schedulers.PlanOrderQueue.TaskWaitingForItsNodeDoesNotHoldBackOtherNodes") {
  PlanHarness h({{"a", 2}, {"b", 1}});
  TaskId filler = h.add(1, 0, {"a"});
  TaskId wide = h.add(2, 1, {"a"});    // needs all of a: must wait for filler
  TaskId narrow = h.add(1, 2, {"a"});  // would fit on a now, but is behind wide there
  TaskId other = h.add(1, 3, {"b"});
  PlanOrderQueue q(h.plan);
  q.on_ready(h.tasks[filler], TimePoint{});
  REQUIRE(h.next(q) == filler);
  h.start(q, filler, 0);
  for (TaskId id : {wide, narrow, other}) q.on_ready(h.tasks[id], TimePoint{});
  // wide waits for a and reserves it; narrow may not overtake it there; b is free for other.
  CHECK(h.next(q) == other);
  h.start(q, other, 1);
  // Nothing fits now: the head of the order comes back, so the coordinator waits for it.
  CHECK(h.next(q) == wide);
  // filler ends: a is free and wide goes first; then a is full again.
  q.on_finish(h.tasks[filler], TaskState::succeeded, Duration{}, TimePoint{});
  h.views[0].free = h.infos[0].capacity;
  CHECK(h.next(q) == wide);
  h.start(q, wide, 0);
  CHECK(h.next(q) == narrow);  // the only one left (it does not fit now: coordinator waits)
  CHECK(q.size() == 1);
}

TEST_CASE("Schedulers.PlanOrderQueue.UncoveredTasksComeFirstAndUseAnyNode") {
  PlanHarness h({{"a", 1}, {"b", 1}});
  TaskId planned = h.add(1, 0, {"a"});
  TaskId service = h.add(1, 0, {});  // e.g. a service replica: not covered
  PlanOrderQueue q(h.plan);
  q.on_ready(h.tasks[planned], TimePoint{});
  q.on_ready(h.tasks[service], TimePoint{});
  TaskSpec late;  // submitted while running: past the end of the plan
  late.id = 7;
  late.per_rank = Resources{1, 0, 0};
  q.on_ready(late, TimePoint{});
  CHECK(h.next(q) == service);
  h.start(q, service, 0);  // takes a: planned must now wait, late may use b
  CHECK(h.next(q) == late.id);
  q.on_start(late, TimePoint{});
  h.views[1].free -= late.total();
  CHECK(h.next(q) == planned);
}

TEST_CASE("Schedulers.PlanOrderQueue.RemoveAndDuplicateReadiness") {
  PlanHarness h({{"a", 4}});
  TaskId x = h.add(1, 0, {"a"});
  TaskId y = h.add(1, 1, {"a"});
  PlanOrderQueue q(h.plan);
  q.on_ready(h.tasks[x], TimePoint{});
  q.on_ready(h.tasks[x], TimePoint{});  // ignored: already queued
  q.on_ready(h.tasks[y], TimePoint{});
  CHECK(q.size() == 2);
  q.remove(x);
  q.remove(x);  // idempotent
  CHECK(q.size() == 1);
  CHECK(h.next(q) == y);
  q.remove(y);
  CHECK_FALSE(h.next(q).has_value());
}

TEST_CASE("Schedulers.PlannedPlacement.OnlyThePlannedNodesFitNow") {
  PlanHarness h({{"a", 2}, {"b", 2}, {"c", 1}});
  TaskId on_a = h.add(2, 0, {"a"});
  TaskId on_bc = h.add(1, 1, {"b", "c"});  // SPWD: a machine type of two nodes
  TaskId free_task = h.add(2, 2, {});
  PlannedPlacement p(h.plan);
  CHECK(p.name() == "planned");
  const auto& t = h.tasks;
  CHECK(p.filter(t[on_a], h.views[0]) == Fit::now);
  CHECK(p.filter(t[on_a], h.views[1]) == Fit::later);  // room, but not the plan's node
  CHECK(p.filter(t[on_a], h.views[2]) == Fit::never);  // 2 cores never fit on c
  CHECK(p.filter(t[on_bc], h.views[0]) == Fit::later);
  CHECK(p.filter(t[on_bc], h.views[1]) == Fit::now);
  CHECK(p.filter(t[on_bc], h.views[2]) == Fit::now);
  h.views[0].free = Resources{1, 0, 0};
  CHECK(p.filter(t[on_a], h.views[0]) == Fit::later);  // its node is busy: wait for it
  // Not covered: any node by resources.
  CHECK(p.filter(t[free_task], h.views[0]) == Fit::later);
  CHECK(p.filter(t[free_task], h.views[1]) == Fit::now);
  CHECK(p.filter(t[free_task], h.views[2]) == Fit::never);
  TaskSpec late = t[on_a];
  late.id = 99;  // past the plan's end
  CHECK(p.filter(late, h.views[1]) == Fit::now);
}
