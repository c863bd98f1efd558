// The workflow scheduling problem (WSP) of Kroczek, Zawalska, Rycerz (arXiv 2506.01567): give each
// vertex of a DAG one machine type so that the total cost is minimal and every root-to-leaf path
// finishes within the deadline. Vertex v on type m takes runtime[v] / speed[m] seconds and costs
// that times price[m]. Machine counts play no role (the paper's model).
#pragma once

#include <cstddef>
#include <vector>

namespace chorus {

struct WspInstance {
  std::vector<double> runtime;  // per vertex, seconds at speed 1.0 (0 for synthetic vertices)
  std::vector<std::vector<std::size_t>> preds;  // per vertex; must form a DAG
  std::vector<double> speed;                    // per machine type
  std::vector<double> price;                    // per machine type, cost per second
  double deadline = 0;

  std::size_t vertices() const { return runtime.size(); }
  std::size_t types() const { return speed.size(); }
  double duration(std::size_t v, std::size_t m) const { return runtime[v] / speed[m]; }
};

// Vertices in a topological order (Kahn).
std::vector<std::size_t> wsp_topological_order(const WspInstance& inst);
// Total cost of an assignment (type per vertex).
double wsp_cost(const WspInstance& inst, const std::vector<std::size_t>& type);
// Longest root-to-leaf path of an assignment.
double wsp_makespan(const WspInstance& inst, const std::vector<std::size_t>& type);

}  // namespace chorus
