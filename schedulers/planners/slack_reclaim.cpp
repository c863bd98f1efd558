#include "schedulers/planners/slack_reclaim.hpp"

#include <algorithm>

#include "schedulers/planners/plan_evaluation.hpp"

namespace chorus {
namespace {

struct Move {
  std::size_t task;
  std::size_t to;
  double ratio;  // cost saved per second of added runtime
};

}  // namespace

std::size_t reclaim_slack(const WorkflowGraph& graph, const Platform& platform, double deadline_s,
                          std::vector<std::size_t>& type) {
  const std::size_t n = graph.tasks.size();
  const auto rt = task_runtimes(graph);
  const auto succ = dependents_of(graph);
  // A topological order, computed once.
  std::vector<std::size_t> order;
  {
    std::vector<std::size_t> missing(n);
    for (std::size_t t = 0; t < n; ++t) {
      missing[t] = graph.tasks[t].after.size();
      if (missing[t] == 0) order.push_back(t);
    }
    for (std::size_t h = 0; h < order.size(); ++h) {
      for (TaskId s : succ[order[h]]) {
        if (--missing[s] == 0) order.push_back(s);
      }
    }
  }
  auto duration = [&](std::size_t t, std::size_t m) { return rt[t] / platform.types[m].speed; };
  auto cost = [&](std::size_t t, std::size_t m) {
    return duration(t, m) * platform.types[m].price;
  };
  std::vector<double> es(n), lf(n);
  auto refresh = [&] {
    for (std::size_t t : order) {
      double s = 0;
      for (TaskId p : graph.tasks[t].after) s = std::max(s, es[p] + duration(p, type[p]));
      es[t] = s;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      double f = deadline_s;
      for (TaskId s : succ[*it]) f = std::min(f, lf[s] - duration(s, type[s]));
      lf[*it] = f;
    }
  };
  const double eps = 1e-9 * std::max(1.0, deadline_s);
  std::size_t applied = 0;
  for (bool progress = true; progress;) {
    progress = false;
    refresh();
    // For each task, the cheaper type that adds the least runtime.
    std::vector<Move> moves;
    for (std::size_t t = 0; t < n; ++t) {
      if (rt[t] <= 0) continue;
      const std::size_t cur = type[t];
      std::size_t best = cur;
      for (std::size_t m = 0; m < platform.types.size(); ++m) {
        if (cost(t, m) >= cost(t, cur) - 1e-12 || duration(t, m) <= duration(t, cur)) continue;
        if (best == cur || duration(t, m) < duration(t, best)) best = m;
      }
      if (best == cur) continue;
      const double extra = duration(t, best) - duration(t, cur);
      moves.push_back({t, best, (cost(t, cur) - cost(t, best)) / extra});
    }
    std::stable_sort(moves.begin(), moves.end(),
                     [](const Move& a, const Move& b) { return a.ratio > b.ratio; });
    for (const Move& mv : moves) {
      if (es[mv.task] + duration(mv.task, mv.to) > lf[mv.task] + eps) continue;
      type[mv.task] = mv.to;
      ++applied;
      progress = true;
      refresh();
    }
  }
  return applied;
}

}  // namespace chorus
