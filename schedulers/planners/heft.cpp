#include "schedulers/planners/heft.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "schedulers/planners/plan_evaluation.hpp"

namespace chorus {
namespace {

struct Slot {
  double start;
  double finish;
};

// Earliest start >= ready on a processor whose busy slots are sorted by start, allowing the task
// to fill an idle gap (the insertion policy).
double earliest_start(const std::vector<Slot>& busy, double ready, double length) {
  double candidate = ready;
  for (const auto& s : busy) {
    if (candidate + length <= s.start) return candidate;
    candidate = std::max(candidate, s.finish);
  }
  return candidate;
}

}  // namespace

HeftSchedule heft_schedule(const HeftProblem& pb) {
  const std::size_t n = pb.tasks;
  const std::size_t np = pb.processors;
  std::vector<std::vector<const HeftEdge*>> succ(n), pred(n);
  for (const auto& e : pb.edges) {
    succ[e.from].push_back(&e);
    pred[e.to].push_back(&e);
  }
  std::vector<double> mean_cost(n, 0.0);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t p = 0; p < np; ++p) mean_cost[t] += pb.cost[t * np + p];
    mean_cost[t] /= static_cast<double>(np);
  }
  // Upward ranks in reverse topological order (Kahn on the reversed graph).
  HeftSchedule out;
  out.upward_rank.assign(n, 0.0);
  std::vector<std::size_t> remaining(n);
  std::vector<std::size_t> rev;
  for (std::size_t t = 0; t < n; ++t) {
    remaining[t] = succ[t].size();
    if (remaining[t] == 0) rev.push_back(t);
  }
  for (std::size_t head = 0; head < rev.size(); ++head) {
    const std::size_t t = rev[head];
    double best = 0;
    for (const HeftEdge* e : succ[t]) best = std::max(best, e->comm + out.upward_rank[e->to]);
    out.upward_rank[t] = mean_cost[t] + best;
    for (const HeftEdge* e : pred[t]) {
      if (--remaining[e->from] == 0) rev.push_back(e->from);
    }
  }
  // Decreasing rank is a topological order when costs are positive; the predecessor check below
  // keeps it one when zero costs make ranks tie.
  out.order.resize(n);
  std::iota(out.order.begin(), out.order.end(), std::size_t{0});
  // Ranks are compared at microsecond resolution so that sums equal on paper tie (then the
  // stable sort keeps the lower index first) instead of being ordered by rounding noise.
  std::vector<long long> rank_key(n);
  for (std::size_t t = 0; t < n; ++t) rank_key[t] = std::llround(out.upward_rank[t] * 1e6);
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](std::size_t a, std::size_t b) { return rank_key[a] > rank_key[b]; });
  {
    std::vector<std::size_t> indeg(n);
    for (std::size_t t = 0; t < n; ++t) indeg[t] = pred[t].size();
    std::vector<char> done(n, 0);
    std::vector<std::size_t> fixed;
    fixed.reserve(n);
    while (fixed.size() < n) {
      for (std::size_t t : out.order) {
        if (done[t] || indeg[t] != 0) continue;
        done[t] = 1;
        fixed.push_back(t);
        for (const HeftEdge* e : succ[t]) --indeg[e->to];
        break;
      }
    }
    out.order = std::move(fixed);
  }

  out.processor.assign(n, 0);
  out.start.assign(n, 0.0);
  out.finish.assign(n, 0.0);
  std::vector<std::vector<Slot>> busy(np);
  for (std::size_t t : out.order) {
    double best_finish = std::numeric_limits<double>::infinity();
    double best_start = 0;
    std::size_t best_p = 0;
    for (std::size_t p = 0; p < np; ++p) {
      double ready = 0;
      for (const HeftEdge* e : pred[t]) {
        const double arrive = out.finish[e->from] + (out.processor[e->from] == p ? 0 : e->comm);
        ready = std::max(ready, arrive);
      }
      const double len = pb.cost[t * np + p];
      const double st = earliest_start(busy[p], ready, len);
      if (st + len < best_finish - 1e-12) {
        best_finish = st + len;
        best_start = st;
        best_p = p;
      }
    }
    out.processor[t] = best_p;
    out.start[t] = best_start;
    out.finish[t] = best_finish;
    auto& slots = busy[best_p];
    slots.insert(std::upper_bound(slots.begin(), slots.end(), best_start,
                                  [](double s, const Slot& x) { return s < x.start; }),
                 Slot{best_start, best_finish});
    out.makespan = std::max(out.makespan, best_finish);
  }
  return out;
}

Result<Plan> HeftPlanner::plan(const WorkflowGraph& graph, const Platform& platform) const {
  auto deadline = resolve_deadline(graph, platform, options_);
  if (!deadline.ok()) return deadline.status();
  // One processor per core; proc_type maps it back to its machine type.
  std::vector<std::size_t> proc_type;
  for (std::size_t m = 0; m < platform.types.size(); ++m) {
    const auto& type = platform.types[m];
    for (int i = 0; i < type.count * type.cores; ++i) proc_type.push_back(m);
  }
  const auto rt = task_runtimes(graph);
  HeftProblem pb;
  pb.tasks = graph.tasks.size();
  pb.processors = proc_type.size();
  pb.cost.resize(pb.tasks * pb.processors);
  for (std::size_t t = 0; t < pb.tasks; ++t) {
    for (std::size_t p = 0; p < pb.processors; ++p) {
      pb.cost[t * pb.processors + p] = rt[t] / platform.types[proc_type[p]].speed;
    }
    for (TaskId d : graph.tasks[t].after) pb.edges.push_back({d, t, 0.0});
  }
  const HeftSchedule s = heft_schedule(pb);

  Plan plan;
  plan.planner = "heft";
  plan.deadline_s = *deadline;
  plan.type.resize(pb.tasks);
  plan.processor.resize(pb.tasks);
  for (std::size_t t = 0; t < pb.tasks; ++t) {
    plan.type[t] = proc_type[s.processor[t]];
    plan.processor[t] = static_cast<int>(s.processor[t]);
  }
  plan.start_s = s.start;
  plan.finish_s = s.finish;
  plan.stats.solver = "heft";
  plan.stats.status = "heuristic";
  plan.stats.solves = 1;
  if (Status st = evaluate_plan(graph, platform, plan); !st.ok()) return st;
  return plan;
}

}  // namespace chorus
