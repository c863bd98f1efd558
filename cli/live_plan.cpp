#include "cli/live_plan.hpp"

#include <filesystem>
#include <map>
#include <string>

#include "cli/output/output.hpp"
#include "cli/task_locations.hpp"
#include "schedulers/placement/planned_placement.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/live_assignment.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/queue/plan_order_queue.hpp"

namespace chorus::cli {
Status check_plan_estimates(const WorkflowGraph& graph, const std::string& path) {
  if (graph.scheduler.planner.empty()) return {};
  const auto plannable = plannable_tasks(graph);
  return locate_missing_estimates(
      graph, path,
      [&](const TaskSpec& t) { return plannable[t.id] && t.estimate <= Duration::zero(); },
      "planner " + graph.scheduler.planner + " needs a runtime estimate for every task",
      "add 'estimate: 30s' (its expected runtime)");
}

Result<std::unique_ptr<LivePlanSetup>> setup_live_plan(const WorkflowGraph& graph,
                                                       const std::vector<NodeInfo>& nodes,
                                                       bool quiet, RunOptions& options) {
  const SchedulerChoice& choice = graph.scheduler;
  if (Status st = check_plan_estimates(
          graph, graph.source_path.empty() ? "" : display_path(graph.source_path));
      !st.ok())
    return st;
  auto planner = make_planner(choice.planner, plan_options_of(choice, graph.tasks.size()));
  if (!planner.ok()) return invalid_argument(planner.status().message());
  auto live = plan_live_run(graph, nodes, **planner);
  if (!live.ok()) return live.status();

  auto setup = std::make_unique<LivePlanSetup>();
  auto plan = std::make_shared<const TaskPlan>(std::move(live->tasks));
  setup->plan = plan;
  setup->registry =
      options.registry != nullptr ? *options.registry : PolicyRegistry::with_builtins();
  setup->registry.add_queue("plan-order",
                            [plan] { return std::make_unique<PlanOrderQueue>(plan); });
  setup->registry.add_placement("planned",
                                [plan] { return std::make_unique<PlannedPlacement>(plan); });
  options.registry = &setup->registry;
  if (options.queue.empty()) options.queue = "plan-order";
  options.placement = "planned";

  std::size_t covered = 0;
  for (const auto& t : plan->tasks) covered += t.covered ? 1 : 0;
  // quiet: the run prints JSON, where this summary has no place.
  Output::for_command(quiet).live_plan(
      {live->plan, covered, graph.tasks.size(), nodes.size(), live->too_wide});
  return setup;
}

}  // namespace chorus::cli
