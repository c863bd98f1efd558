#include "cli/live_plan.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "schedulers/placement/planned_placement.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/live_assignment.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/queue/plan_order_queue.hpp"
#include "workflows/diagnostic.hpp"

namespace chorus::cli {
namespace {

constexpr std::size_t kMaxDiagnostics = 20;

struct Where {
  int line = 0, column = 0;
};

// Task entries of `tasks:` (and of repeat groups' `tasks:`) by name: the position of the name.
void collect_task_names(const YAML::Node& tasks, std::map<std::string, Where>& out) {
  if (!tasks || !tasks.IsSequence()) return;
  for (const auto& entry : tasks) {
    if (!entry.IsMap()) continue;
    if (entry["repeat"]) {
      collect_task_names(entry["tasks"], out);
      continue;
    }
    const YAML::Node name = entry["name"];
    if (!name || !name.IsScalar()) continue;
    const YAML::Mark m = name.Mark();
    out.emplace(name.Scalar(), Where{m.line + 1, m.column + 1});
  }
}

std::map<std::string, Where> task_positions(const std::string& path) {
  std::map<std::string, Where> out;
  try {
    collect_task_names(YAML::LoadFile(path)["tasks"], out);
  } catch (const YAML::Exception&) {
    // The file loaded a moment ago; if it cannot be read again the names go unlocated.
  }
  return out;
}

// The file as the user would name it: relative to the cwd when it lies below it.
std::string display_path(const std::string& path) {
  std::error_code ec;
  const auto rel = std::filesystem::proximate(path, ec).string();
  return !ec && rel.rfind("..", 0) != 0 ? rel : path;
}

}  // namespace

Status check_plan_estimates(const WorkflowGraph& graph, const std::string& path) {
  if (graph.scheduler.planner.empty()) return {};
  const auto plannable = plannable_tasks(graph);
  // Per task entry (a sweep's members share one): how many members lack an estimate.
  std::vector<std::pair<std::string, std::size_t>> missing;
  std::map<std::string, std::size_t> index;
  for (const auto& t : graph.tasks) {
    if (!plannable[t.id] || t.estimate > Duration::zero()) continue;
    const std::string entry = t.name.substr(0, t.name.find('['));
    auto [it, added] = index.emplace(entry, missing.size());
    if (added) missing.emplace_back(entry, 0);
    ++missing[it->second].second;
  }
  if (missing.empty()) return {};
  const auto where = path.empty() ? std::map<std::string, Where>{} : task_positions(path);
  std::vector<std::pair<Where, std::string>> lines;
  for (const auto& [entry, count] : missing) {
    const auto it = where.find(entry);
    const Where w = it == where.end() ? Where{} : it->second;
    std::string what = "'" + entry + "'";
    if (count > 1) what += " (" + std::to_string(count) + " members)";
    lines.emplace_back(w, "planner " + graph.scheduler.planner +
                              " needs a runtime estimate for every task, and " + what +
                              (count > 1 ? " have" : " has") +
                              " none: add 'estimate: 30s' (its expected runtime)");
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) {
    return a.first.line < b.first.line ||
           (a.first.line == b.first.line && a.first.column < b.first.column);
  });
  std::string message;
  for (std::size_t i = 0; i < lines.size() && i < kMaxDiagnostics; ++i) {
    if (i > 0) message += '\n';
    message +=
        Diagnostic{path, lines[i].first.line, lines[i].first.column, lines[i].second}.format();
  }
  if (lines.size() > kMaxDiagnostics) {
    message += "\n" + path + ": and " + std::to_string(lines.size() - kMaxDiagnostics) +
               " more task entries without an estimate";
  }
  return invalid_argument(message);
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
