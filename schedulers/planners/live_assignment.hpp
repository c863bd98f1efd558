// Planning a live run: the run's nodes as a Platform, and a Plan turned into the TaskPlan the
// live policies follow (schedulers/queue/plan_order_queue, schedulers/placement/planned_placement).
//
// The platform: nodes of equal capacity (cores, memory, GPUs) form one machine type of speed 1
// and price 1, named after its first node, `count` = how many such nodes. Speed 1 because Chorus
// does not know how fast a node is; the estimates are taken as seconds on these nodes.
// HEFT's processor (a core of a machine of a type) maps to that machine's node; SPWD and the
// MILP plan machine types, and a type maps to all of its nodes (any of them will do).
#pragma once

#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/status.hpp"
#include "core/workflow_graph.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/platform.hpp"
#include "schedulers/task_plan.hpp"

namespace chorus {

struct NodePlatform {
  Platform platform;
  std::vector<std::vector<std::string>> type_nodes;  // per machine type: its nodes, in run order
};

// `nodes` must not be empty.
NodePlatform platform_of_nodes(const std::vector<NodeInfo>& nodes);

// The planner options a workflow's `scheduler:` section asks for (mss, deadline), for a graph of
// `tasks` tasks: a percentage mss is rounded up and kept at 2 vertices at least.
PlanOptions plan_options_of(const SchedulerChoice& choice, std::size_t tasks);

// Whether the plan places `task`: every task but service replicas and repeat groups' gates
// (which run as long as other work needs them, or take no time).
std::vector<bool> plannable_tasks(const WorkflowGraph& graph);

struct LivePlan {
  Plan plan;
  NodePlatform platform;
  TaskPlan tasks;
  // Tasks the plan placed on a node too small for them (HEFT counts one core per task): left
  // uncovered, so they may run anywhere.
  std::vector<std::string> too_wide;
};

// Plans `graph` onto `nodes` with `planner` and builds the TaskPlan: positions are a topological
// order by planned start time, then HEFT upward rank (mean runtime over the platform's cores),
// then task id.
// Errors: invalid_argument naming tasks that need an `estimate:` and have none (a plan from
// invented runtimes would look authoritative and be arbitrary, so there is no default), and the
// planner's own errors (an infeasible deadline: unsatisfiable).
Result<LivePlan> plan_live_run(const WorkflowGraph& graph, const std::vector<NodeInfo>& nodes,
                               const GraphPlanner& planner);

// TaskPlan positions for `plan` (exposed for tests): see plan_live_run.
std::vector<std::size_t> plan_positions(const WorkflowGraph& graph, const Platform& platform,
                                        const Plan& plan);

}  // namespace chorus
