// A workflow whose `scheduler:` names a planner (`planner: heft|spwd`): plan the graph onto the
// run's nodes before it starts and run it with the policies that follow the plan — "plan-order"
// (schedulers/queue/plan_order_queue) and "planned" (schedulers/placement/planned_placement).
#pragma once

#include <memory>
#include <vector>

#include "api/run_workflow.hpp"
#include "core/node_info.hpp"
#include "core/workflow_graph.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/task_plan.hpp"

namespace chorus::cli {

// What `chorus validate` and `chorus run` check before planning: every task the planner places
// (plannable_tasks) needs an `estimate:`. ok when the graph names no planner or none is
// missing; otherwise invalid_argument with one located diagnostic per task entry of the file
// ("wf.yaml:4:5: planner spwd needs a runtime estimate for every task, and 'a' has none: ...";
// a sweep is one entry), at most 20.
// `path` is the file as the user named it; entries are located by reading it again, and a task
// that cannot be located (or a graph built in code, path empty) is named without a position.
Status check_plan_estimates(const WorkflowGraph& graph, const std::string& path);

// Owns what the run's options point at: keep it alive until the run returns.
struct LivePlanSetup {
  PolicyRegistry registry;
  std::shared_ptr<const TaskPlan> plan;
};

// Plans `graph` (its scheduler.planner must be set) onto `nodes` and points `options` at the
// plan's policies: placement "planned", queue "plan-order" unless options.queue already names
// one (--queue). Prints a one-line summary of the plan to stderr unless `quiet`.
// Errors: invalid_argument (tasks without estimates, no nodes), unsatisfiable (deadline).
Result<std::unique_ptr<LivePlanSetup>> setup_live_plan(const WorkflowGraph& graph,
                                                       const std::vector<NodeInfo>& nodes,
                                                       bool quiet, RunOptions& options);

}  // namespace chorus::cli
