// The WSP as a mixed-integer program, solved exactly by CBC (COIN-OR branch and cut).
//
// Variables x[v][m] in {0,1} (vertex v on type m; vertices of zero runtime get none and take the
// fastest type), one type per vertex, objective sum x * runtime/speed * price. The deadline is
// written in one of two equivalent ways:
//  - paths: one row per root-to-leaf path, sum over the path of x * runtime/speed <= D (the
//    paper's form; the number of paths grows exponentially with the DAG's width and depth);
//  - start_times: a finish-time variable f[v] per vertex, f[v] >= f[u] + sum_m x[v][m] *
//    runtime/speed for each edge u -> v (f[v] >= that sum for a root), f[v] <= D. A path's sum
//    is at most the finish time of its last vertex, and the earliest-start times of a feasible
//    assignment satisfy every row, so both forms admit exactly the same assignments; this one
//    has edges + vertices rows and lets CBC take whole WfCommons instances.
// automatic uses paths when the DAG has at most max_paths of them, else start_times.
#pragma once

#include <string>
#include <vector>

#include "schedulers/planners/wsp_instance.hpp"

namespace chorus {

enum class WspFormulation { automatic, paths, start_times };
const char* to_string(WspFormulation f);

struct WspMilpOptions {
  WspFormulation formulation = WspFormulation::automatic;
  double max_paths = 2000;
  double time_limit_s = 120;  // passed to CBC, which measures it
  // Give CBC the all-fastest assignment (always feasible when any assignment is) as a start.
  bool warm_start = true;
};

enum class WspOutcome {
  optimal,      // proven optimal (within CBC's default tolerances)
  feasible,     // a solution, optimality not proven before the time limit
  infeasible,   // no assignment meets the deadline
  no_solution,  // stopped before finding any solution
};
const char* to_string(WspOutcome o);

struct WspMilpResult {
  WspOutcome outcome = WspOutcome::no_solution;
  std::vector<std::size_t> type;  // per vertex, when outcome is optimal or feasible
  double cost = 0;                // of `type`, recomputed from the instance
  double bound = 0;               // CBC's best lower bound
  double gap = 0;                 // (cost - bound) / cost
  long nodes = 0;
  WspFormulation formulation = WspFormulation::start_times;  // the one used
};

// Number of root-to-leaf paths (as a double: it overflows integers on real workflows).
double count_paths(const WspInstance& inst);

WspMilpResult solve_wsp_milp(const WspInstance& inst, const WspMilpOptions& options);

}  // namespace chorus
