// Output's forms of the workflow commands' results: validate, import, plan (and the plan a run
// follows), simulate.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/output/output.hpp"
#include "core/units.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/platform.hpp"
#include "schedulers/sim/json_text.hpp"
#include "schedulers/sim/metrics.hpp"

namespace chorus::cli {
namespace {

// "type/machine/core" for HEFT's processor index.
std::string processor_name(const Platform& p, int proc) {
  int left = proc;
  for (const auto& m : p.types) {
    const int n = m.count * m.cores;
    if (left < n) {
      return m.name + "/" + std::to_string(left / m.cores) + "/" + std::to_string(left % m.cores);
    }
    left -= n;
  }
  return "?";
}

void plan_json(const Output& out, const PlanReport& r,
               const std::map<std::string, std::size_t>& used) {
  const Platform& p = r.platform;
  const Plan& pl = r.plan;
  const PlanOptions& opt = r.options;
  nlohmann::ordered_json j;
  j["workflow"] = r.graph.name;
  j["file"] = r.file;
  j["planner"] = pl.planner;
  j["platform"] = p.name;
  j["tasks"] = r.graph.tasks.size();
  j["cost"] = pl.cost;
  j["makespan_s"] = pl.makespan_s;
  j["deadline_s"] = pl.deadline_s;
  j["deadline_met"] = pl.deadline_met;
  j["solve_s"] = r.solve_s;
  j["fastest_makespan_s"] = r.fastest_makespan_s;
  if (pl.planner == "spwd") j["mss"] = opt.max_subgraph_size;
  nlohmann::ordered_json stats;
  stats["solver"] = pl.stats.solver;
  stats["status"] = pl.stats.status;
  stats["gap"] = pl.stats.gap;
  stats["nodes"] = pl.stats.nodes;
  stats["solves"] = pl.stats.solves;
  if (!pl.stats.formulation.empty()) stats["formulation"] = pl.stats.formulation;
  if (pl.planner == "milp") stats["bound"] = pl.stats.bound;
  if (pl.planner == "spwd") {
    stats["pieces"] = pl.stats.pieces;
    stats["max_piece_size"] = pl.stats.max_piece_size;
    stats["sp_vertices"] = pl.stats.sp_vertices;
    stats["sp_edges"] = pl.stats.sp_edges;
    stats["synthetic_vertices"] = pl.stats.synthetic_vertices;
    stats["substitute_vertices"] = pl.stats.substitute_vertices;
    stats["infeasible_pieces"] = pl.stats.infeasible_pieces;
    stats["merged_cost"] = pl.stats.merged_cost;
    stats["reclaim_moves"] = pl.stats.reclaim_moves;
    if (opt.reclaim_slack) stats["reclaim_cost"] = pl.stats.reclaim_cost;
    if (opt.refine_deadlines) {
      stats["refined_cost"] = pl.stats.refined_cost;
      stats["refine_solves"] = pl.stats.refine_solves;
    }
    stats["chosen"] = pl.stats.chosen;
  }
  j["stats"] = stats;
  j["types_used"] = used;
  nlohmann::ordered_json assignment = nlohmann::ordered_json::object();
  nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
  for (const auto& t : r.graph.tasks) {
    assignment[t.name] = p.types[pl.type[t.id]].name;
    if (!pl.processor.empty()) nodes[t.name] = processor_name(p, pl.processor[t.id]);
  }
  j["assignment"] = assignment;
  if (!pl.processor.empty()) j["nodes"] = nodes;
  out.json_document(j);
}

}  // namespace

void Output::validation(const ValidationReport& r) const {
  std::fprintf(out_, "%s: ok — workflow '%s', %zu tasks, %zu dependencies\n", r.file.c_str(),
               r.workflow.c_str(), r.tasks, r.dependencies);
}

void Output::imported(const ImportReport& r) const {
  std::fprintf(out_, "%s: %zu tasks, %zu dependencies (WfFormat %s) -> %s\n", r.file.c_str(),
               r.tasks, r.dependencies, r.schema_version.c_str(), r.output.c_str());
}

void Output::plan(const PlanReport& r) const {
  const Platform& p = r.platform;
  const Plan& pl = r.plan;
  const PlanOptions& opt = r.options;
  std::map<std::string, std::size_t> used;
  for (std::size_t t : pl.type) ++used[p.types[t].name];
  if (json()) {
    plan_json(*this, r, used);
    return;
  }
  std::fprintf(out_, "workflow   %s (%zu tasks) on platform %s, planner %s\n", r.graph.name.c_str(),
               r.graph.tasks.size(), p.name.c_str(), pl.planner.c_str());
  std::fprintf(out_, "cost       %.2f\n", pl.cost);
  std::fprintf(out_, "makespan   %s (deadline %s: %s)\n", format_seconds(pl.makespan_s).c_str(),
               format_seconds(pl.deadline_s).c_str(), pl.deadline_met ? "met" : "MISSED");
  std::fprintf(out_, "solver     %s, %s, gap %.4g, %ld nodes, %zu solve(s), %.3f s\n",
               pl.stats.solver.c_str(), pl.stats.status.c_str(), pl.stats.gap, pl.stats.nodes,
               pl.stats.solves, r.solve_s);
  if (pl.planner == "spwd") {
    std::fprintf(out_,
                 "spwd       mss %zu: %zu pieces (largest %zu), SP graph %zu vertices "
                 "(%zu synthetic, %zu substitutes), %zu edges\n",
                 opt.max_subgraph_size, pl.stats.pieces, pl.stats.max_piece_size,
                 pl.stats.sp_vertices, pl.stats.synthetic_vertices, pl.stats.substitute_vertices,
                 pl.stats.sp_edges);
    std::fprintf(out_, "           cost %.2f after the merge (the paper's SPWD)",
                 pl.stats.merged_cost);
    if (opt.reclaim_slack) {
      std::fprintf(out_, ", %.2f with slack reclamation", pl.stats.reclaim_cost);
    }
    if (opt.refine_deadlines) {
      std::fprintf(out_, ", %.2f with the deadline refinement (%zu more solves)",
                   pl.stats.refined_cost, pl.stats.refine_solves);
    }
    std::fprintf(out_, "; plan: %s%s\n", pl.stats.chosen.c_str(),
                 opt.reclaim_slack ? " + reclamation" : "");
  }
  std::fprintf(out_, "types     ");
  for (const auto& [name, n] : used) std::fprintf(out_, " %s:%zu", name.c_str(), n);
  std::fprintf(out_, "\nassignment\n");
  for (const auto& t : r.graph.tasks) {
    std::fprintf(out_, "  %s -> %s", t.name.c_str(), p.types[pl.type[t.id]].name.c_str());
    if (!pl.processor.empty()) {
      std::fprintf(out_, " (%s, %.3f..%.3f s)", processor_name(p, pl.processor[t.id]).c_str(),
                   pl.start_s[t.id], pl.finish_s[t.id]);
    }
    std::fprintf(out_, "\n");
  }
}

void Output::live_plan(const LivePlanReport& r) const {
  if (json()) return;
  const Plan& p = r.plan;
  std::fprintf(err_,
               "chorus: planned %zu of %zu tasks with %s onto %zu node%s: makespan %s "
               "(deadline %s: %s)\n",
               r.covered, r.tasks, p.planner.c_str(), r.nodes, r.nodes == 1 ? "" : "s",
               format_seconds(p.makespan_s).c_str(), format_seconds(p.deadline_s).c_str(),
               p.deadline_met ? "met" : "MISSED");
  if (!r.too_wide.empty()) {
    std::fprintf(err_,
                 "chorus: %zu task%s (first '%s') need more than the node %s planned them on "
                 "holds; they may run on any node\n",
                 r.too_wide.size(), r.too_wide.size() == 1 ? "" : "s", r.too_wide.front().c_str(),
                 p.planner.c_str());
  }
}

void Output::simulation(const SimulationTable& t) const {
  if (json()) {
    // The simulator's own JSON writer (schedulers/sim/json_text: valid UTF-8, 10 digits), so
    // the figures read the same here as in its records.
    std::string out = "{";
    for (std::size_t i = 0; i < t.policies.size(); ++i) {
      if (i) out += ",";
      out += "\n  " + sim::json_quote(t.policies[i].first) + ": " +
             sim::metrics_json(*t.policies[i].second);
    }
    out += "\n}\n";
    std::fputs(out.c_str(), out_);
    return;
  }
  std::fprintf(out_,
               "workload %s: %zu jobs, %zu tasks; cluster %s (%d cores); %d seed%s from %llu%s\n",
               t.workload.c_str(), t.jobs, t.tasks, t.cluster.c_str(), t.total_cores, t.seeds,
               t.seeds == 1 ? "" : "s (medians)", static_cast<unsigned long long>(t.first_seed),
               t.partition.empty() ? "" : (", partitioned to " + t.partition).c_str());
  // jain: Jain's index of received / entitled service; attain, min att: the fair attainment's
  // Jain index and its worst user (schedulers/sim/metrics.hpp).
  std::fprintf(out_, "%-10s %11s %11s %11s %11s %11s %9s %9s %6s %6s %7s %6s %10s\n", "policy",
               "small mean", "small p90", "large mean", "p90", "worst10%", "slowdown", "large sd",
               "jain", "attain", "min att", "viol", "makespan");
  // NaN (no job of the class) prints as "-".
  auto cell = [](double v, int width, const char* unit) {
    char buf[32];
    if (std::isnan(v)) {
      std::snprintf(buf, sizeof buf, "%*s", width, "-");
    } else {
      std::snprintf(buf, sizeof buf, "%*.2f%s", width - static_cast<int>(std::strlen(unit)), v,
                    unit);
    }
    return std::string(buf);
  };
  for (const auto& [name, metrics] : t.policies) {
    const sim::Metrics& m = *metrics;
    std::fprintf(out_, "%-10s %s %s %s %s %s %s %s %6.3f %6.3f %7.3f %6.3f %9.1fs\n", name.c_str(),
                 cell(m.small_mean_response_s, 11, "s").c_str(),
                 cell(m.small_p90_response_s, 11, "s").c_str(),
                 cell(m.large_mean_response_s, 11, "s").c_str(),
                 cell(m.p90_response_s, 11, "s").c_str(),
                 cell(m.worst10_response_s, 11, "s").c_str(), cell(m.mean_slowdown, 9, "").c_str(),
                 cell(m.large_mean_slowdown, 9, "").c_str(), m.jain_users, m.fair_attainment_jain,
                 m.fair_attainment_min, m.deadline_violation_ratio, m.makespan_s);
  }
}

}  // namespace chorus::cli
