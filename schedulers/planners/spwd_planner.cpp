#include "schedulers/planners/spwd_planner.hpp"

#include <algorithm>
#include <cmath>

#include "schedulers/planners/deadline_dp.hpp"
#include "schedulers/planners/heft.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/slack_reclaim.hpp"
#include "schedulers/planners/sp_graph.hpp"
#include "schedulers/planners/sp_tree.hpp"
#include "schedulers/planners/spwd_decomposition.hpp"
#include "schedulers/planners/wsp_milp.hpp"

namespace chorus {
namespace {

// Width of deadline_dp's time buckets: the deadline / this.
constexpr std::size_t kDeadlineBuckets = 400;
// At most this many rounds of choosing and re-solving at the allotted deadlines.
constexpr int kRefineRounds = 4;

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
  // The type with the lowest price per unit of work (price / speed); of equal ones the fastest.
  std::size_t cheapest = 0;
  for (std::size_t m = 1; m < platform.types.size(); ++m) {
    const auto& a = platform.types[m];
    const auto& b = platform.types[cheapest];
    const double ra = a.price / a.speed, rb = b.price / b.speed;
    if (ra < rb * (1 - 1e-12) || (ra <= rb * (1 + 1e-12) && a.speed > b.speed)) cheapest = m;
  }
  constexpr std::size_t unset = static_cast<std::size_t>(-1);
  WspMilpOptions milp;
  milp.time_limit_s = options_.time_limit_s;

  // Each piece's WSP instance, over its local vertex numbering.
  std::vector<WspInstance> insts(dec->pieces.size());
  {
    std::vector<std::size_t> local(dec->original.size(), unset);
    for (std::size_t p = 0; p < dec->pieces.size(); ++p) {
      const Subworkflow& piece = dec->pieces[p];
      plan.stats.max_piece_size = std::max(plan.stats.max_piece_size, piece.vertices.size());
      WspInstance& inst = insts[p];
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
    }
  }
  // Merges one solution per piece: a task in several pieces keeps the fastest type it got.
  auto merge = [&](const std::vector<const std::vector<std::size_t>*>& chosen) {
    std::vector<std::size_t> type(n, unset);
    for (std::size_t p = 0; p < dec->pieces.size(); ++p) {
      const Subworkflow& piece = dec->pieces[p];
      for (std::size_t i = 0; i < piece.vertices.size(); ++i) {
        const std::size_t v = piece.vertices[i];
        if (dec->is_substitute(v) || sp.task[v] == kSyntheticVertex) continue;
        const std::size_t task = sp.task[v];
        const std::size_t got = (*chosen[p])[i];
        if (type[task] == unset || platform.types[got].speed > platform.types[type[task]].speed)
          type[task] = got;
      }
    }
    for (auto& t : type) {
      if (t == unset) t = fastest;  // unreachable: every vertex lies on an edge of some piece
    }
    return type;
  };

  // Steps 5-6 as in the paper: each piece at its share of the deadline.
  std::vector<std::vector<std::size_t>> paper_types(dec->pieces.size());
  for (std::size_t p = 0; p < dec->pieces.size(); ++p) {
    WspMilpResult r = solve_wsp_milp(insts[p], milp);
    add_outcome(plan.stats, r);
    const bool solved = r.outcome == WspOutcome::optimal || r.outcome == WspOutcome::feasible;
    if (!solved) ++plan.stats.infeasible_pieces;
    paper_types[p] =
        solved ? std::move(r.type) : std::vector<std::size_t>(insts[p].vertices(), fastest);
  }
  {
    std::vector<const std::vector<std::size_t>*> chosen;
    for (const auto& t : paper_types) chosen.push_back(&t);
    plan.type = merge(chosen);
  }
  if (Status st = evaluate_plan(graph, platform, plan); !st.ok()) return st;
  plan.stats.merged_cost = plan.cost;
  plan.stats.chosen = "paper";
  if (options_.reclaim_slack && plan.deadline_met) {
    plan.stats.reclaim_moves = reclaim_slack(graph, platform, plan.deadline_s, plan.type);
    if (Status st = evaluate_plan(graph, platform, plan); !st.ok()) return st;
    plan.stats.reclaim_cost = plan.cost;
  }
  if (!options_.refine_deadlines) return plan;

  // Refinement: more solutions per piece, one chosen per piece by deadline_dp.
  std::vector<std::vector<std::vector<std::size_t>>> sols(dec->pieces.size());
  std::vector<std::vector<PieceOption>> opts(dec->pieces.size());
  auto add_option = [&](std::size_t p, std::vector<std::size_t> type) {
    opts[p].push_back({wsp_makespan(insts[p], type), wsp_cost(insts[p], type)});
    sols[p].push_back(std::move(type));
  };
  for (std::size_t p = 0; p < dec->pieces.size(); ++p) {
    WspInstance inst = insts[p];
    const std::size_t nv = inst.vertices();
    add_option(p, paper_types[p]);
    const double t_fast = wsp_makespan(inst, std::vector<std::size_t>(nv, fastest));
    std::vector<std::size_t> all_cheap(nv, cheapest);
    const double t_cheap = wsp_makespan(inst, all_cheap);
    add_option(p, std::move(all_cheap));  // optimal for any deadline from t_cheap on
    // Evenly spaced deadlines from the piece's fastest makespan up to (not including) its
    // cheapest one, whose solution is already an option.
    const std::size_t k = std::max<std::size_t>(options_.refine_levels, 2);
    for (std::size_t level = 0; level + 1 < k && t_cheap > t_fast; ++level) {
      inst.deadline =
          t_fast + (t_cheap - t_fast) * static_cast<double>(level) / static_cast<double>(k - 1);
      if (inst.deadline > *deadline) break;
      WspMilpResult r = solve_wsp_milp(inst, milp);
      ++plan.stats.refine_solves;
      if (r.outcome == WspOutcome::optimal || r.outcome == WspOutcome::feasible)
        add_option(p, std::move(r.type));
    }
  }
  // Rounds: choose by dynamic programming, then re-solve each piece at the deadline the choice
  // allots it (never dearer, never later than allotted) and offer those solutions to the next
  // round, until a round gains nothing.
  std::vector<std::size_t> pick;
  double best = HUGE_VAL;
  for (int round = 0; round < kRefineRounds; ++round) {
    const auto choice = choose_piece_options(dec->frames, opts, *deadline, kDeadlineBuckets);
    // None only when D is below the SP graph's fastest makespan (docs/spwd.md, step 5).
    if (!choice) break;
    std::vector<std::size_t> next = choice->option;
    double cost = 0;
    for (std::size_t p = 0; p < dec->pieces.size(); ++p) {
      const PieceOption chosen = opts[p][next[p]];
      WspInstance& inst = insts[p];
      inst.deadline = choice->allotted[p];
      if (inst.deadline > chosen.time * (1 + 1e-9) + 1e-9 && chosen.cost > 0) {
        WspMilpResult r = solve_wsp_milp(inst, milp);
        ++plan.stats.refine_solves;
        if ((r.outcome == WspOutcome::optimal || r.outcome == WspOutcome::feasible) &&
            r.cost < chosen.cost) {
          add_option(p, std::move(r.type));
          next[p] = opts[p].size() - 1;
        }
      }
      cost += opts[p][next[p]].cost;
    }
    if (cost >= best * (1 - 1e-9)) break;
    best = cost;
    pick = std::move(next);
  }
  if (pick.empty()) return plan;
  Plan refined = plan;
  {
    std::vector<const std::vector<std::size_t>*> chosen;
    for (std::size_t p = 0; p < dec->pieces.size(); ++p) chosen.push_back(&sols[p][pick[p]]);
    refined.type = merge(chosen);
  }
  if (Status st = evaluate_plan(graph, platform, refined); !st.ok()) return st;
  refined.stats.refined_cost = refined.cost;
  plan.stats.refined_cost = refined.cost;
  if (!refined.deadline_met) return plan;
  if (options_.reclaim_slack) {
    refined.stats.reclaim_moves = reclaim_slack(graph, platform, refined.deadline_s, refined.type);
    if (Status st = evaluate_plan(graph, platform, refined); !st.ok()) return st;
  }
  // A plan that meets the deadline beats one that does not, whatever it costs.
  if (!plan.deadline_met || refined.cost < plan.cost) {
    refined.stats.chosen = "refined";
    return refined;
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
