#include "schedulers/planners/wsp_instance.hpp"

#include <algorithm>

namespace chorus {

std::vector<std::size_t> wsp_topological_order(const WspInstance& inst) {
  const std::size_t n = inst.vertices();
  std::vector<std::vector<std::size_t>> succ(n);
  std::vector<std::size_t> missing(n);
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t p : inst.preds[v]) succ[p].push_back(v);
    missing[v] = inst.preds[v].size();
    if (missing[v] == 0) order.push_back(v);
  }
  for (std::size_t head = 0; head < order.size(); ++head) {
    for (std::size_t s : succ[order[head]]) {
      if (--missing[s] == 0) order.push_back(s);
    }
  }
  return order;
}

double wsp_cost(const WspInstance& inst, const std::vector<std::size_t>& type) {
  double cost = 0;
  for (std::size_t v = 0; v < inst.vertices(); ++v) {
    cost += inst.duration(v, type[v]) * inst.price[type[v]];
  }
  return cost;
}

double wsp_makespan(const WspInstance& inst, const std::vector<std::size_t>& type) {
  std::vector<double> finish(inst.vertices(), 0.0);
  double best = 0;
  for (std::size_t v : wsp_topological_order(inst)) {
    double start = 0;
    for (std::size_t p : inst.preds[v]) start = std::max(start, finish[p]);
    finish[v] = start + inst.duration(v, type[v]);
    best = std::max(best, finish[v]);
  }
  return best;
}

}  // namespace chorus
