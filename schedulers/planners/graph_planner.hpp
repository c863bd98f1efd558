// GraphPlanner: plans a whole workflow DAG onto a Platform before it runs (HEFT, SPWD, the
// whole-instance WSP MILP). A planner is a pure function of (graph, platform, options): no I/O,
// no threads, no clock (a solver time limit is an option, measured by the solver itself).
//
// Task runtimes come from TaskSpec::estimate (seconds on a speed-1.0 machine).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"
#include "schedulers/planners/platform.hpp"

namespace chorus {

struct PlanOptions {
  std::optional<double> deadline_s;  // default: critical path at the platform's mean speed
  // SPWD's maximum subgraph size (vertices of the series-parallel graph, synthetic ones
  // included); values below 2 are rejected.
  std::size_t max_subgraph_size = 50;
  double time_limit_s = 120;  // for each CBC solve
  // SPWD: after the merge, move tasks to cheaper types while the deadline holds
  // (slack_reclaim.hpp). Not part of the paper's algorithm; off reproduces it exactly.
  bool reclaim_slack = true;
  // SPWD: also solve each piece at `refine_levels` evenly spaced deadlines between its fastest
  // and its cheapest makespan and choose one solution per piece by dynamic programming over the
  // decomposition tree (deadline_dp.hpp); the plan is the cheaper of that and the paper's
  // distribution. Not part of the paper's algorithm; off (and reclaim_slack off) reproduces it.
  bool refine_deadlines = true;
  std::size_t refine_levels = 10;
};

struct PlanStats {
  std::string solver;  // "heft", "cbc"
  std::string status;  // "optimal", "time limit (feasible)", "heuristic", ...
  double gap = 0;      // relative MILP gap of the reported solution (0 = proven optimal)
  double bound = 0;    // best lower bound on the cost the solver proved
  long nodes = 0;      // branch-and-bound nodes, summed over solves
  std::size_t solves = 0;
  std::size_t pieces = 0;          // SPWD subworkflows
  std::size_t max_piece_size = 0;  // SPWD: vertices of the largest subworkflow
  std::size_t sp_vertices = 0;     // SPWD: vertices of the series-parallel graph
  std::size_t sp_edges = 0;
  std::size_t synthetic_vertices = 0;   // added by SP-ization
  std::size_t substitute_vertices = 0;  // added by series-node splitting
  std::size_t infeasible_pieces = 0;    // pieces CBC could not solve (given the fastest type)
  std::string formulation;              // "paths" / "start-times" / "mixed"
  double merged_cost = 0;               // SPWD: cost after step 6, before slack reclamation
  std::size_t reclaim_moves = 0;        // SPWD: tasks moved by slack reclamation
  double reclaim_cost = 0;        // SPWD: the paper's plan after slack reclamation (0 = not run)
  double refined_cost = 0;        // SPWD: the deadline-DP plan after the merge (0 = not run)
  std::size_t refine_solves = 0;  // SPWD: CBC solves the refinement added
  std::string chosen;  // SPWD: "paper" or "refined": whose plan (after reclamation) is returned
};

struct Plan {
  std::string planner;
  std::vector<std::size_t> type;  // per task: index into Platform::types
  std::vector<int> processor;     // HEFT only: core index over all machines; empty otherwise
  std::vector<double> start_s;    // earliest start on the original DAG (HEFT: its own schedule)
  std::vector<double> finish_s;
  double makespan_s = 0;
  double cost = 0;
  double deadline_s = 0;
  bool deadline_met = false;
  PlanStats stats;
};

class GraphPlanner {
 public:
  virtual ~GraphPlanner() = default;
  virtual std::string_view name() const = 0;
  // Errors: invalid_argument for a bad platform or options, unsatisfiable for a deadline below
  // the fastest possible makespan ("infeasible: the fastest possible makespan is 812 s").
  virtual Result<Plan> plan(const WorkflowGraph& graph, const Platform& platform) const = 0;
};

// "heft", "spwd" or "milp"; not_found (listing the names) otherwise.
Result<std::unique_ptr<GraphPlanner>> make_planner(std::string_view name, PlanOptions options);

}  // namespace chorus
