#include "schedulers/planners/live_assignment.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>

#include "schedulers/planners/plan_evaluation.hpp"

namespace chorus {

NodePlatform platform_of_nodes(const std::vector<NodeInfo>& nodes) {
  NodePlatform out;
  out.platform.name = "nodes";
  std::vector<Resources> capacity;
  for (const auto& n : nodes) {
    std::size_t t = 0;
    while (t < capacity.size() &&
           !(capacity[t].cores == n.capacity.cores &&
             capacity[t].memory_mb == n.capacity.memory_mb && capacity[t].gpus == n.capacity.gpus))
      ++t;
    if (t == capacity.size()) {
      capacity.push_back(n.capacity);
      MachineType m;
      m.name = n.name;
      m.speed = 1.0;
      m.cores = std::max(1, n.capacity.cores);
      m.count = 0;
      m.price = 1.0;
      out.platform.types.push_back(m);
      out.type_nodes.emplace_back();
    }
    out.platform.types[t].count += 1;
    out.type_nodes[t].push_back(n.name);
  }
  return out;
}

PlanOptions plan_options_of(const SchedulerChoice& choice, std::size_t tasks) {
  PlanOptions o;
  if (choice.planner_mss > 0) {
    const double size = choice.planner_mss_percent
                            ? std::ceil(choice.planner_mss / 100.0 * static_cast<double>(tasks))
                            : choice.planner_mss;
    o.max_subgraph_size = static_cast<std::size_t>(std::max(2.0, size));
  }
  if (choice.planner_deadline > Duration::zero()) {
    o.deadline_s = std::chrono::duration<double>(choice.planner_deadline).count();
  }
  return o;
}

std::vector<bool> plannable_tasks(const WorkflowGraph& graph) {
  std::vector<bool> out(graph.tasks.size(), true);
  for (const auto& t : graph.tasks) {
    if (t.kind == TaskKind::service) out[t.id] = false;
  }
  for (const auto& r : graph.repeats) {
    if (r.gate < out.size()) out[r.gate] = false;
  }
  return out;
}

std::vector<std::size_t> plan_positions(const WorkflowGraph& graph, const Platform& platform,
                                        const Plan& plan) {
  const std::size_t n = graph.tasks.size();
  // HEFT's mean cost: the runtime averaged over every core of the platform.
  double inverse_speed = 0;
  double processors = 0;
  for (const auto& m : platform.types) {
    const double k = static_cast<double>(m.count) * m.cores;
    inverse_speed += k / m.speed;
    processors += k;
  }
  inverse_speed = processors > 0 ? inverse_speed / processors : 1.0;
  const auto runtime = task_runtimes(graph);
  const auto dependents = dependents_of(graph);
  // Upward rank: reverse topological order (Kahn over dependents).
  std::vector<double> rank(n, 0.0);
  std::vector<std::size_t> left(n);
  std::vector<TaskId> rev;
  for (TaskId t = 0; t < n; ++t) {
    left[t] = dependents[t].size();
    if (left[t] == 0) rev.push_back(t);
  }
  for (std::size_t head = 0; head < rev.size(); ++head) {
    const TaskId t = rev[head];
    double best = 0;
    for (TaskId d : dependents[t]) best = std::max(best, rank[d]);
    rank[t] = runtime[t] * inverse_speed + best;
    for (TaskId p : graph.tasks[t].after) {
      if (--left[p] == 0) rev.push_back(p);
    }
  }
  // Keys at microsecond resolution, so that times equal on paper tie instead of being ordered by
  // rounding noise.
  using Key = std::tuple<long long, long long, TaskId>;
  auto key_of = [&](TaskId t) {
    const double start = t < plan.start_s.size() ? plan.start_s[t] : 0.0;
    return Key{std::llround(start * 1e6), -std::llround(rank[t] * 1e6), t};
  };
  std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
  std::vector<std::size_t> waiting(n);
  for (TaskId t = 0; t < n; ++t) {
    waiting[t] = graph.tasks[t].after.size();
    if (waiting[t] == 0) ready.push(key_of(t));
  }
  std::vector<std::size_t> position(n, 0);
  std::size_t next = 0;
  while (!ready.empty()) {
    const TaskId t = std::get<2>(ready.top());
    ready.pop();
    position[t] = next++;
    for (TaskId d : dependents[t]) {
      if (--waiting[d] == 0) ready.push(key_of(d));
    }
  }
  return position;
}

Result<LivePlan> plan_live_run(const WorkflowGraph& graph, const std::vector<NodeInfo>& nodes,
                               const GraphPlanner& planner) {
  if (nodes.empty()) return invalid_argument("no nodes to plan the workflow onto");
  const auto plannable = plannable_tasks(graph);
  std::vector<std::string> missing;
  for (const auto& t : graph.tasks) {
    if (plannable[t.id] && t.estimate <= Duration::zero()) missing.push_back("'" + t.name + "'");
  }
  if (!missing.empty()) {
    const std::size_t shown = std::min<std::size_t>(missing.size(), 3);
    std::string names;
    for (std::size_t i = 0; i < shown; ++i) names += (i == 0 ? "" : ", ") + missing[i];
    if (missing.size() > shown) names += " and " + std::to_string(missing.size() - shown) + " more";
    return invalid_argument("planner " + std::string(planner.name()) +
                            " needs a runtime estimate for every task, and " + names +
                            (missing.size() == 1 ? " has" : " have") +
                            " none: add 'estimate: 30s' (its expected runtime) to each task");
  }
  LivePlan out;
  out.platform = platform_of_nodes(nodes);
  auto plan = planner.plan(graph, out.platform.platform);
  if (!plan.ok()) {
    return Status(plan.status().code(),
                  "planner " + std::string(planner.name()) + ": " + plan.status().message());
  }
  out.plan = std::move(*plan);
  const Platform& platform = out.platform.platform;
  // HEFT: processor index -> (type, machine) -> node.
  std::vector<std::string> processor_node;
  if (!out.plan.processor.empty()) {
    for (std::size_t m = 0; m < platform.types.size(); ++m) {
      for (int machine = 0; machine < platform.types[m].count; ++machine) {
        for (int core = 0; core < platform.types[m].cores; ++core) {
          processor_node.push_back(out.platform.type_nodes[m][static_cast<std::size_t>(machine)]);
        }
      }
    }
  }
  const auto positions = plan_positions(graph, platform, out.plan);
  out.tasks.planner = out.plan.planner;
  out.tasks.tasks.resize(graph.tasks.size());
  for (const auto& t : graph.tasks) {
    if (!plannable[t.id]) continue;
    PlannedTask& p = out.tasks.tasks[t.id];
    p.position = positions[t.id];
    std::vector<std::string> planned;
    if (!out.plan.processor.empty()) {
      planned.push_back(processor_node[static_cast<std::size_t>(out.plan.processor[t.id])]);
    } else {
      planned = out.platform.type_nodes[out.plan.type[t.id]];
    }
    // A type's nodes share one capacity: a task that does not fit one fits none of them.
    const Resources need = t.total();
    const auto fits = [&](const std::string& name) {
      for (const auto& n : nodes) {
        if (n.name == name) return need.fits_in(n.capacity);
      }
      return false;
    };
    if (!fits(planned.front())) {
      out.too_wide.push_back(t.name);
      continue;
    }
    p.nodes = std::move(planned);
    p.covered = true;
  }
  return out;
}

}  // namespace chorus
