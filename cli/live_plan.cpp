#include "cli/live_plan.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

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

  if (!quiet) {
    const Plan& p = live->plan;
    std::size_t covered = 0;
    for (const auto& t : plan->tasks) covered += t.covered ? 1 : 0;
    std::fprintf(stderr,
                 "chorus: planned %zu of %zu tasks with %s onto %zu node%s: makespan %s "
                 "(deadline %s: %s)\n",
                 covered, graph.tasks.size(), p.planner.c_str(), nodes.size(),
                 nodes.size() == 1 ? "" : "s", format_seconds(p.makespan_s).c_str(),
                 format_seconds(p.deadline_s).c_str(), p.deadline_met ? "met" : "MISSED");
    if (!live->too_wide.empty()) {
      std::fprintf(stderr,
                   "chorus: %zu task%s (first '%s') need more than the node %s planned them on "
                   "holds; they may run on any node\n",
                   live->too_wide.size(), live->too_wide.size() == 1 ? "" : "s",
                   live->too_wide.front().c_str(), p.planner.c_str());
    }
  }
  return setup;
}

}  // namespace chorus::cli
