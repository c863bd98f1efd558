#include "schedulers/planners/plan_evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace chorus {
namespace {

// Kahn's order; the graph is valid (acyclic) when we get here.
std::vector<TaskId> topological_order(const WorkflowGraph& graph) {
  const auto n = graph.tasks.size();
  const auto deps = dependents_of(graph);
  std::vector<std::size_t> missing(n);
  std::vector<TaskId> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    missing[i] = graph.tasks[i].after.size();
    if (missing[i] == 0) order.push_back(static_cast<TaskId>(i));
  }
  for (std::size_t head = 0; head < order.size(); ++head) {
    for (TaskId d : deps[order[head]]) {
      if (--missing[d] == 0) order.push_back(d);
    }
  }
  return order;
}

}  // namespace

std::vector<double> task_runtimes(const WorkflowGraph& graph) {
  std::vector<double> rt;
  rt.reserve(graph.tasks.size());
  for (const auto& t : graph.tasks) {
    rt.push_back(std::chrono::duration<double>(t.estimate).count());
  }
  return rt;
}

double longest_path(const WorkflowGraph& graph, const std::vector<double>& duration,
                    std::vector<double>* start, std::vector<double>* finish) {
  const auto n = graph.tasks.size();
  std::vector<double> s(n, 0.0);
  std::vector<double> f(n, 0.0);
  double best = 0;
  for (TaskId t : topological_order(graph)) {
    for (TaskId p : graph.tasks[t].after) s[t] = std::max(s[t], f[p]);
    f[t] = s[t] + duration[t];
    best = std::max(best, f[t]);
  }
  if (start != nullptr) *start = std::move(s);
  if (finish != nullptr) *finish = std::move(f);
  return best;
}

double default_deadline(const WorkflowGraph& graph, const Platform& platform) {
  auto rt = task_runtimes(graph);
  const double speed = platform.mean_speed();
  for (auto& r : rt) r /= speed;
  return longest_path(graph, rt);
}

double fastest_makespan(const WorkflowGraph& graph, const Platform& platform) {
  auto rt = task_runtimes(graph);
  const double speed = platform.types[platform.fastest()].speed;
  for (auto& r : rt) r /= speed;
  return longest_path(graph, rt);
}

std::string format_seconds(double s) {
  char buf[64];
  if (std::fabs(s - std::round(s)) < 1e-9 || std::fabs(s) >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  }
  return buf;
}

Result<double> resolve_deadline(const WorkflowGraph& graph, const Platform& platform,
                                const PlanOptions& options) {
  if (Status s = validate_platform(platform); !s.ok()) return s;
  if (graph.tasks.empty()) return invalid_argument("the workflow has no tasks to plan");
  if (Status s = validate_graph(graph); !s.ok()) return s;
  const auto rt = task_runtimes(graph);
  if (std::all_of(rt.begin(), rt.end(), [](double r) { return r <= 0; })) {
    return invalid_argument(
        "no task has a runtime estimate (set `estimate:` on tasks, or plan a WfCommons trace)");
  }
  const double fastest = fastest_makespan(graph, platform);
  double deadline = options.deadline_s ? *options.deadline_s : default_deadline(graph, platform);
  if (!(deadline > 0) || !std::isfinite(deadline)) {
    return invalid_argument("the deadline must be a positive number of seconds");
  }
  // A relative tolerance keeps a deadline typed from a printed makespan from being refused.
  if (deadline < fastest * (1 - 1e-9)) {
    return Status(ErrorCode::unsatisfiable, "infeasible: the fastest possible makespan is " +
                                                format_seconds(fastest) + " (deadline " +
                                                format_seconds(deadline) + ")");
  }
  return deadline;
}

Status evaluate_plan(const WorkflowGraph& graph, const Platform& platform, Plan& plan) {
  const auto n = graph.tasks.size();
  if (plan.type.size() != n) return internal_error("plan assigns a wrong number of tasks");
  const auto rt = task_runtimes(graph);
  std::vector<double> duration(n);
  plan.cost = 0;
  for (std::size_t t = 0; t < n; ++t) {
    if (plan.type[t] >= platform.types.size()) return internal_error("plan names an unknown type");
    const auto& m = platform.types[plan.type[t]];
    duration[t] = rt[t] / m.speed;
    plan.cost += duration[t] * m.price;
  }
  if (plan.processor.empty()) {
    plan.makespan_s = longest_path(graph, duration, &plan.start_s, &plan.finish_s);
  } else {
    plan.makespan_s = 0;
    for (double f : plan.finish_s) plan.makespan_s = std::max(plan.makespan_s, f);
  }
  plan.deadline_met = plan.makespan_s <= plan.deadline_s * (1 + 1e-9) + 1e-9;
  return {};
}

}  // namespace chorus
