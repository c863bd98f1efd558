#include "schedulers/planners/wsp_milp.hpp"

#include <Cbc_C_Interface.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace chorus {
namespace {

constexpr double kInf = std::numeric_limits<double>::max();

// Rows collected as (row, col, value) and handed to CBC column-major in one call.
struct ModelBuilder {
  std::vector<double> col_lb, col_ub, obj;
  std::vector<char> integer;
  std::vector<double> row_lb, row_ub;
  std::vector<std::vector<std::pair<int, double>>> cols;  // per column: (row, value)

  int add_col(double lb, double ub, double cost, bool is_int) {
    col_lb.push_back(lb);
    col_ub.push_back(ub);
    obj.push_back(cost);
    integer.push_back(is_int ? 1 : 0);
    cols.emplace_back();
    return static_cast<int>(cols.size() - 1);
  }
  int add_row(double lb, double ub) {
    row_lb.push_back(lb);
    row_ub.push_back(ub);
    return static_cast<int>(row_lb.size() - 1);
  }
  void set(int row, int col, double value) { cols[col].emplace_back(row, value); }
};

struct CbcDeleter {
  void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

// Visits every root-to-leaf path; stops early when `visit` returns false.
template <typename Visit>
void for_each_path(const WspInstance& inst, Visit visit) {
  const std::size_t n = inst.vertices();
  std::vector<std::vector<std::size_t>> succ(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t p : inst.preds[v]) succ[p].push_back(v);
  }
  std::vector<std::size_t> path;
  std::vector<std::pair<std::size_t, std::size_t>> stack;  // (vertex, next successor index)
  bool go_on = true;
  for (std::size_t root = 0; root < n && go_on; ++root) {
    if (!inst.preds[root].empty()) continue;
    stack.push_back({root, 0});
    path.push_back(root);
    while (!stack.empty() && go_on) {
      auto& [v, next] = stack.back();
      if (succ[v].empty()) {
        go_on = visit(path);
      }
      if (next < succ[v].size()) {
        std::size_t w = succ[v][next++];
        stack.push_back({w, 0});
        path.push_back(w);
      } else {
        stack.pop_back();
        path.pop_back();
      }
    }
    stack.clear();
    path.clear();
  }
}

}  // namespace

const char* to_string(WspFormulation f) {
  switch (f) {
    case WspFormulation::automatic:
      return "automatic";
    case WspFormulation::paths:
      return "paths";
    case WspFormulation::start_times:
      return "start-times";
  }
  return "?";
}

const char* to_string(WspOutcome o) {
  switch (o) {
    case WspOutcome::optimal:
      return "optimal";
    case WspOutcome::feasible:
      return "feasible (time limit)";
    case WspOutcome::infeasible:
      return "infeasible";
    case WspOutcome::no_solution:
      return "no solution (time limit)";
  }
  return "?";
}

double count_paths(const WspInstance& inst) {
  const auto order = wsp_topological_order(inst);
  std::vector<double> into(inst.vertices(), 0.0);
  std::vector<char> has_succ(inst.vertices(), 0);
  for (std::size_t v = 0; v < inst.vertices(); ++v) {
    for (std::size_t p : inst.preds[v]) has_succ[p] = 1;
  }
  double total = 0;
  for (std::size_t v : order) {
    if (inst.preds[v].empty()) into[v] = 1;
    for (std::size_t p : inst.preds[v]) into[v] += into[p];
    if (!has_succ[v]) total += into[v];
  }
  return total;
}

WspMilpResult solve_wsp_milp(const WspInstance& inst, const WspMilpOptions& options) {
  const std::size_t n = inst.vertices();
  const std::size_t nm = inst.types();
  WspMilpResult res;
  std::size_t fastest = 0;
  for (std::size_t m = 1; m < nm; ++m) {
    if (inst.speed[m] > inst.speed[fastest]) fastest = m;
  }
  const double tol = 1e-9 * std::max(1.0, inst.deadline);

  // Quick exits: nothing to decide, or the all-fastest assignment already misses the deadline.
  std::vector<std::size_t> all_fastest(n, fastest);
  if (wsp_makespan(inst, all_fastest) > inst.deadline + tol) {
    res.outcome = WspOutcome::infeasible;
    return res;
  }
  res.formulation = options.formulation;
  if (res.formulation == WspFormulation::automatic) {
    res.formulation = count_paths(inst) <= options.max_paths ? WspFormulation::paths
                                                             : WspFormulation::start_times;
  }

  ModelBuilder mb;
  std::vector<int> first_x(n, -1);  // column of x[v][0]; -1 for zero-runtime vertices
  for (std::size_t v = 0; v < n; ++v) {
    if (inst.runtime[v] <= 0) continue;
    const int row = mb.add_row(1, 1);
    for (std::size_t m = 0; m < nm; ++m) {
      const int c = mb.add_col(0, 1, inst.duration(v, m) * inst.price[m], true);
      if (m == 0) first_x[v] = c;
      mb.set(row, c, 1);
    }
  }
  auto add_duration_terms = [&](int row, std::size_t v, double sign) {
    if (first_x[v] < 0) return;
    for (std::size_t m = 0; m < nm; ++m) {
      mb.set(row, first_x[v] + static_cast<int>(m), sign * inst.duration(v, m));
    }
  };

  std::vector<int> fcol(n, -1);
  if (res.formulation == WspFormulation::paths) {
    for_each_path(inst, [&](const std::vector<std::size_t>& path) {
      const int row = mb.add_row(-kInf, inst.deadline);
      for (std::size_t v : path) add_duration_terms(row, v, 1.0);
      return true;
    });
  } else {
    // Bounds from the all-fastest schedule tighten the LP: f[v] can be no earlier than its
    // fastest earliest finish and no later than D minus the fastest tail after it.
    const auto order = wsp_topological_order(inst);
    std::vector<double> early(n, 0.0), tail(n, 0.0);
    std::vector<std::vector<std::size_t>> succ(n);
    for (std::size_t v = 0; v < n; ++v) {
      for (std::size_t p : inst.preds[v]) succ[p].push_back(v);
    }
    for (std::size_t v : order) {
      double s = 0;
      for (std::size_t p : inst.preds[v]) s = std::max(s, early[p]);
      early[v] = s + inst.duration(v, fastest);
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      double t = 0;
      for (std::size_t s : succ[*it]) t = std::max(t, tail[s] + inst.duration(s, fastest));
      tail[*it] = t;
    }
    for (std::size_t v = 0; v < n; ++v) {
      fcol[v] = mb.add_col(early[v], std::max(early[v], inst.deadline - tail[v]), 0, false);
    }
    for (std::size_t v = 0; v < n; ++v) {
      if (inst.preds[v].empty()) {
        const int row = mb.add_row(0, kInf);
        mb.set(row, fcol[v], 1);
        add_duration_terms(row, v, -1.0);
      }
      for (std::size_t p : inst.preds[v]) {
        const int row = mb.add_row(0, kInf);
        mb.set(row, fcol[v], 1);
        mb.set(row, fcol[p], -1);
        add_duration_terms(row, v, -1.0);
      }
    }
  }

  std::vector<std::size_t> type(n, fastest);
  if (mb.cols.empty()) {  // every vertex has zero runtime
    res.outcome = WspOutcome::optimal;
    res.type = std::move(type);
    return res;
  }

  std::vector<CoinBigIndex> start{0};
  std::vector<int> index;
  std::vector<double> value;
  for (const auto& col : mb.cols) {
    for (const auto& [r, v] : col) {
      index.push_back(r);
      value.push_back(v);
    }
    start.push_back(static_cast<CoinBigIndex>(index.size()));
  }
  std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
  Cbc_Model* cbc = model.get();
  Cbc_loadProblem(cbc, static_cast<int>(mb.cols.size()), static_cast<int>(mb.row_lb.size()),
                  start.data(), index.data(), value.data(), mb.col_lb.data(), mb.col_ub.data(),
                  mb.obj.data(), mb.row_lb.data(), mb.row_ub.data());
  for (std::size_t c = 0; c < mb.integer.size(); ++c) {
    if (mb.integer[c]) Cbc_setInteger(cbc, static_cast<int>(c));
  }
  Cbc_setObjSense(cbc, 1);
  Cbc_setLogLevel(cbc, 0);
  Cbc_setMaximumSeconds(cbc, options.time_limit_s);
  // CBC counts CPU seconds by default; on a shared machine the limit must be wall time.
  Cbc_setParameter(cbc, "timeMode", "elapsed");
  if (options.warm_start) {
    std::vector<int> idx;
    std::vector<double> val;
    std::vector<double> finish;
    for (std::size_t v = 0; v < n; ++v) {
      if (first_x[v] < 0) continue;
      for (std::size_t m = 0; m < nm; ++m) {
        idx.push_back(first_x[v] + static_cast<int>(m));
        val.push_back(m == fastest ? 1.0 : 0.0);
      }
    }
    if (res.formulation == WspFormulation::start_times) {
      // Earliest finish times of the all-fastest assignment.
      std::vector<double> f(n, 0.0);
      for (std::size_t v : wsp_topological_order(inst)) {
        double s = 0;
        for (std::size_t p : inst.preds[v]) s = std::max(s, f[p]);
        f[v] = s + inst.duration(v, fastest);
        idx.push_back(fcol[v]);
        val.push_back(f[v]);
      }
    }
    Cbc_setMIPStartI(cbc, static_cast<int>(idx.size()), idx.data(), val.data());
  }
  Cbc_solve(cbc);

  res.nodes = Cbc_getNodeCount(cbc);
  const double* sol = Cbc_getColSolution(cbc);
  const bool have = sol != nullptr && Cbc_numberSavedSolutions(cbc) > 0;
  if (Cbc_isProvenInfeasible(cbc) && !have) {
    res.outcome = WspOutcome::infeasible;
    return res;
  }
  if (!have && !Cbc_isProvenOptimal(cbc)) {
    res.outcome = WspOutcome::no_solution;
    res.bound = Cbc_getBestPossibleObjValue(cbc);
    return res;
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (first_x[v] < 0) continue;
    std::size_t best = 0;
    for (std::size_t m = 1; m < nm; ++m) {
      if (sol[first_x[v] + static_cast<int>(m)] > sol[first_x[v] + static_cast<int>(best)])
        best = m;
    }
    type[v] = best;
  }
  res.type = std::move(type);
  res.cost = wsp_cost(inst, res.type);
  res.outcome = Cbc_isProvenOptimal(cbc) ? WspOutcome::optimal : WspOutcome::feasible;
  res.bound = std::min(Cbc_getBestPossibleObjValue(cbc), res.cost);
  if (res.outcome == WspOutcome::optimal) res.bound = res.cost;
  res.gap = res.cost > 0 ? (res.cost - res.bound) / res.cost : 0.0;
  return res;
}

}  // namespace chorus
