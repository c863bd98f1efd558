// chorus plan FILE --platform P --planner heft|spwd|milp: plan a workflow DAG onto machine types
// without running it, and print the assignment, its cost, makespan and the deadline check.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/json_text.hpp"
#include "cli/workflow_input.hpp"
#include "core/units.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/platform_reader.hpp"
#include "workflows/wfcommons_reader.hpp"

namespace chorus::cli {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "50" = 50 vertices; "10%" = 10 % of the task count, rounded up; at least 2 either way.
Result<std::size_t> parse_mss(const std::string& text, std::size_t tasks) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(v > 0)) {
    return invalid_argument("--mss: expected a vertex count or a percentage (50, 10%), got '" +
                            text + "'");
  }
  const double size = percent ? std::ceil(v / 100.0 * static_cast<double>(tasks)) : std::floor(v);
  if (size < 2) {
    return invalid_argument("--mss: " + text + " is below 2 vertices, the smallest subworkflow");
  }
  return static_cast<std::size_t>(size);
}

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

Result<WorkflowGraph> load_graph(const std::string& file) {
  if (ends_with(file, ".json")) {
    auto inst = read_wfcommons_file(file);
    if (!inst.ok()) return inst.status();
    return std::move(inst->graph);
  }
  return load_workflow_for_cli(file, /*oversubscribe=*/true);
}

int exit_code_for(const Status& s) {
  switch (s.code()) {
    case ErrorCode::invalid_argument:
    case ErrorCode::not_found:
    case ErrorCode::unsatisfiable:
    case ErrorCode::io_error:
      return kExitBadInput;
    default:
      return kExitError;
  }
}

void add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "plan", "Plan a workflow onto a platform's machine types (HEFT, SPWD or the whole MILP)");
  struct Args {
    std::string file;
    std::string platform;
    std::string planner = "spwd";
    std::string mss = "50";
    std::string deadline;
    std::string time_limit = "120s";
    bool json = false;
    bool no_reclaim = false;
    bool no_refine = false;
    std::size_t refine_levels = PlanOptions{}.refine_levels;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("file", a->file, "Workflow: YAML, or a WfCommons instance (.json)")->required();
  cmd->add_option("--platform", a->platform, "Platform YAML (machine types)")->required();
  cmd->add_option("--planner", a->planner, "heft, spwd or milp")->default_str("spwd");
  cmd->add_option("--mss", a->mss, "SPWD: largest subworkflow, vertices or % of tasks")
      ->default_str("50");
  cmd->add_option("--deadline", a->deadline,
                  "Deadline (30m, 812, ...; default: critical path at the mean speed)");
  cmd->add_option("--time-limit", a->time_limit, "Limit for each CBC solve")->default_str("120s");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->add_flag("--no-reclaim", a->no_reclaim, "SPWD: skip slack reclamation after the merge");
  cmd->add_option("--refine-levels", a->refine_levels,
                  "SPWD refinement: deadlines each piece is solved at (2 or more)")
      ->default_val(PlanOptions{}.refine_levels)
      ->check(CLI::Range(std::size_t{2}, std::size_t{1000}));
  cmd->add_flag("--no-refine", a->no_refine,
                "SPWD: skip the deadline refinement (with --no-reclaim: the paper's algorithm "
                "exactly)");
  cmd->callback([a] {
    auto fail = [](const Status& s) {
      print_error(s.message());
      throw CLI::RuntimeError(exit_code_for(s));
    };
    auto graph = load_graph(a->file);
    if (!graph.ok()) fail(graph.status());
    auto platform = read_platform_file(a->platform);
    if (!platform.ok()) fail(platform.status());
    PlanOptions opt;
    auto mss = parse_mss(a->mss, graph->tasks.size());
    if (!mss.ok()) fail(mss.status());
    opt.max_subgraph_size = *mss;
    if (!a->deadline.empty()) {
      auto d = parse_duration(a->deadline);
      if (!d.ok()) fail(invalid_argument("--deadline: " + d.status().message()));
      opt.deadline_s = std::chrono::duration<double>(*d).count();
    }
    auto limit = parse_duration(a->time_limit);
    if (!limit.ok()) fail(invalid_argument("--time-limit: " + limit.status().message()));
    opt.time_limit_s = std::chrono::duration<double>(*limit).count();
    opt.reclaim_slack = !a->no_reclaim;
    opt.refine_deadlines = !a->no_refine;
    opt.refine_levels = a->refine_levels;
    auto planner = make_planner(a->planner, opt);
    if (!planner.ok()) fail(planner.status());

    const auto t0 = std::chrono::steady_clock::now();
    auto plan = (*planner)->plan(*graph, *platform);
    const double solve_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!plan.ok()) fail(plan.status());
    const Platform& p = *platform;
    const Plan& pl = *plan;
    std::map<std::string, std::size_t> used;
    for (std::size_t t : pl.type) ++used[p.types[t].name];

    if (a->json) {
      nlohmann::ordered_json j;
      j["workflow"] = graph->name;
      j["file"] = a->file;
      j["planner"] = pl.planner;
      j["platform"] = p.name;
      j["tasks"] = graph->tasks.size();
      j["cost"] = pl.cost;
      j["makespan_s"] = pl.makespan_s;
      j["deadline_s"] = pl.deadline_s;
      j["deadline_met"] = pl.deadline_met;
      j["solve_s"] = solve_s;
      j["fastest_makespan_s"] = fastest_makespan(*graph, p);
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
      for (const auto& t : graph->tasks) {
        assignment[t.name] = p.types[pl.type[t.id]].name;
        if (!pl.processor.empty()) nodes[t.name] = processor_name(p, pl.processor[t.id]);
      }
      j["assignment"] = assignment;
      if (!pl.processor.empty()) j["nodes"] = nodes;
      std::printf("%s\n", json_text(j, 2).c_str());
      return;
    }
    std::printf("workflow   %s (%zu tasks) on platform %s, planner %s\n", graph->name.c_str(),
                graph->tasks.size(), p.name.c_str(), pl.planner.c_str());
    std::printf("cost       %.2f\n", pl.cost);
    std::printf("makespan   %s (deadline %s: %s)\n", format_seconds(pl.makespan_s).c_str(),
                format_seconds(pl.deadline_s).c_str(), pl.deadline_met ? "met" : "MISSED");
    std::printf("solver     %s, %s, gap %.4g, %ld nodes, %zu solve(s), %.3f s\n",
                pl.stats.solver.c_str(), pl.stats.status.c_str(), pl.stats.gap, pl.stats.nodes,
                pl.stats.solves, solve_s);
    if (pl.planner == "spwd") {
      std::printf(
          "spwd       mss %zu: %zu pieces (largest %zu), SP graph %zu vertices "
          "(%zu synthetic, %zu substitutes), %zu edges\n",
          opt.max_subgraph_size, pl.stats.pieces, pl.stats.max_piece_size, pl.stats.sp_vertices,
          pl.stats.synthetic_vertices, pl.stats.substitute_vertices, pl.stats.sp_edges);
      std::printf("           cost %.2f after the merge (the paper's SPWD)", pl.stats.merged_cost);
      if (opt.reclaim_slack) std::printf(", %.2f with slack reclamation", pl.stats.reclaim_cost);
      if (opt.refine_deadlines) {
        std::printf(", %.2f with the deadline refinement (%zu more solves)", pl.stats.refined_cost,
                    pl.stats.refine_solves);
      }
      std::printf("; plan: %s%s\n", pl.stats.chosen.c_str(),
                  opt.reclaim_slack ? " + reclamation" : "");
    }
    std::printf("types     ");
    for (const auto& [name, n] : used) std::printf(" %s:%zu", name.c_str(), n);
    std::printf("\nassignment\n");
    for (const auto& t : graph->tasks) {
      std::printf("  %s -> %s", t.name.c_str(), p.types[pl.type[t.id]].name.c_str());
      if (!pl.processor.empty()) {
        std::printf(" (%s, %.3f..%.3f s)", processor_name(p, pl.processor[t.id]).c_str(),
                    pl.start_s[t.id], pl.finish_s[t.id]);
      }
      std::printf("\n");
    }
  });
}

const CommandRegistrar registrar{"plan", add_plan_command};

}  // namespace
}  // namespace chorus::cli
