// chorus plan FILE --platform P --planner heft|spwd|milp: plan a workflow DAG onto machine types
// without running it, and print the assignment, its cost, makespan and the deadline check.
#include <chrono>
#include <cmath>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
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
    const Output out = Output::for_command(a->json);
    auto fail = [&out](const Status& s) {
      out.error(s.message());
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
    out.plan(
        {*graph, a->file, *platform, *plan, opt, solve_s, fastest_makespan(*graph, *platform)});
  });
}

const CommandRegistrar registrar{"plan", add_plan_command};

}  // namespace
}  // namespace chorus::cli
