#include "schedulers/planners/spwd_planner.hpp"

#include <algorithm>

#include "schedulers/planners/heft.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/slack_reclaim.hpp"
#include "schedulers/planners/sp_graph.hpp"
#include "schedulers/planners/sp_tree.hpp"
#include "schedulers/planners/spwd_decomposition.hpp"
#include "schedulers/planners/wsp_milp.hpp"

namespace chorus {
namespace {

std::vector<std::vector<std::size_t>> preds_of(const WorkflowGraph& graph) {
  std::vector<std::vector<std::size_t>> preds(graph.tasks.size());
  for (const auto& t : graph.tasks) preds[t.id].assign(t.after.begin(), t.after.end());
  return preds;
}

void fill_platform(WspInstance& inst, const Platform& platform) {
  for (const auto& m : platform.types) {
    inst.speed.push_back(m.speed);
    inst.price.push_back(m.price);
  }
}

void add_outcome(PlanStats& stats, const WspMilpResult& r) {
  ++stats.solves;
  stats.nodes += r.nodes;
  stats.gap = std::max(stats.gap, r.gap);
  const std::string f = to_string(r.formulation);
  if (stats.formulation.empty()) {
    stats.formulation = f;
  } else if (stats.formulation != f) {
    stats.formulation = "mixed";
  }
  if (r.outcome != WspOutcome::optimal &&
      (stats.status.empty() || stats.status == to_string(WspOutcome::optimal))) {
    stats.status = to_string(r.outcome);
  } else if (stats.status.empty()) {
    stats.status = to_string(r.outcome);
  }
}

}  // namespace

Result<Plan> SpwdPlanner::plan(const WorkflowGraph& graph, const Platform& platform) const {
  auto deadline = resolve_deadline(graph, platform, options_);
  if (!deadline.ok()) return deadline.status();
  const std::size_t n = graph.tasks.size();
  const auto rt = task_runtimes(graph);

  // Vertex weight: the task's mean runtime over the machine types.
  double mean_inverse_speed = 0;
  for (const auto& m : platform.types) mean_inverse_speed += 1.0 / m.speed;
  mean_inverse_speed /= static_cast<double>(platform.types.size());
  std::vector<double> weight(n);
  for (std::size_t t = 0; t < n; ++t) weight[t] = rt[t] * mean_inverse_speed;

  const SpGraph sp = spize(preds_of(graph), weight);
  auto tree = decompose_sp(sp);
  if (!tree.ok())
    return internal_error("SP-ization produced a graph that is " + tree.status().message());
  std::vector<double> sp_weight(sp.vertex_count, 0.0);
  for (std::size_t v = 0; v < sp.vertex_count; ++v) {
    if (sp.task[v] != kSyntheticVertex) sp_weight[v] = weight[sp.task[v]];
  }
  assign_weights(*tree, sp, sp_weight);
  auto dec = decompose_spwd(sp, *tree, sp_weight, *deadline, options_.max_subgraph_size);
  if (!dec.ok()) return dec.status();

  Plan plan;
  plan.planner = "spwd";
  plan.deadline_s = *deadline;
  plan.stats.solver = "cbc";
  plan.stats.pieces = dec->pieces.size();
  plan.stats.sp_vertices = sp.vertex_count;
  plan.stats.sp_edges = sp.edges.size();
  plan.stats.synthetic_vertices = sp.synthetic_count();
  plan.stats.substitute_vertices = dec->substitutes();

  const std::size_t fastest = platform.fastest();
  constexpr std::size_t unset = static_cast<std::size_t>(-1);
  std::vector<std::size_t> type(n, unset);
  WspMilpOptions milp;
  milp.time_limit_s = options_.time_limit_s;
  std::vector<std::size_t> local(dec->original.size(), unset);
  for (const Subworkflow& piece : dec->pieces) {
    plan.stats.max_piece_size = std::max(plan.stats.max_piece_size, piece.vertices.size());
    WspInstance inst;
    fill_platform(inst, platform);
    inst.deadline = piece.deadline;
    for (std::size_t i = 0; i < piece.vertices.size(); ++i) {
      const std::size_t v = piece.vertices[i];
      local[v] = i;
      const std::size_t task = dec->is_substitute(v) ? kSyntheticVertex : sp.task[v];
      inst.runtime.push_back(task == kSyntheticVertex ? 0.0 : rt[task]);
    }
    inst.preds.resize(piece.vertices.size());
    for (auto [u, v] : piece.edges) inst.preds[local[v]].push_back(local[u]);
    WspMilpResult r = solve_wsp_milp(inst, milp);
    add_outcome(plan.stats, r);
    const bool solved = r.outcome == WspOutcome::optimal || r.outcome == WspOutcome::feasible;
    if (!solved) ++plan.stats.infeasible_pieces;
    for (std::size_t i = 0; i < piece.vertices.size(); ++i) {
      const std::size_t v = piece.vertices[i];
      if (dec->is_substitute(v) || sp.task[v] == kSyntheticVertex) continue;
      const std::size_t task = sp.task[v];
      const std::size_t got = solved ? r.type[i] : fastest;
      if (type[task] == unset || platform.types[got].speed > platform.types[type[task]].speed) {
        type[task] = got;
      }
    }
  }
  for (auto& t : type) {
    if (t == unset) t = fastest;  // unreachable: every vertex lies on an edge of some piece
  }
  plan.type = std::move(type);
  if (Status st = evaluate_plan(graph, platform, plan); !st.ok()) return st;
  plan.stats.merged_cost = plan.cost;
  if (options_.reclaim_slack && plan.deadline_met) {
    plan.stats.reclaim_moves = reclaim_slack(graph, platform, plan.deadline_s, plan.type);
    if (Status st = evaluate_plan(graph, platform, plan); !st.ok()) return st;
  }
  return plan;
}

Result<Plan> MilpPlanner::plan(const WorkflowGraph& graph, const Platform& platform) const {
  auto deadline = resolve_deadline(graph, platform, options_);
  if (!deadline.ok()) return deadline.status();
  WspInstance inst;
  fill_platform(inst, platform);
  inst.deadline = *deadline;
  inst.runtime = task_runtimes(graph);
  inst.preds = preds_of(graph);
  WspMilpOptions milp;
  milp.time_limit_s = options_.time_limit_s;
  const WspMilpResult r = solve_wsp_milp(inst, milp);
  Plan plan;
  plan.planner = "milp";
  plan.deadline_s = *deadline;
  plan.stats.solver = "cbc";
  add_outcome(plan.stats, r);
  plan.stats.bound = r.bound;
  if (r.outcome == WspOutcome::no_solution) {
    return Status(ErrorCode::unavailable,
                  "no solution: CBC found no assignment within the time limit of " +
                      format_seconds(options_.time_limit_s) +
                      " (try a longer --time-limit or "
                      "--planner spwd)");
  }
  if (r.outcome == WspOutcome::infeasible) {
    return Status(ErrorCode::unsatisfiable,
                  "infeasible: no assignment meets the deadline of " + format_seconds(*deadline));
  }
  plan.type = r.type;
  if (Status st = evaluate_plan(graph, platform, plan); !st.ok()) return st;
  return plan;
}

}  // namespace chorus
