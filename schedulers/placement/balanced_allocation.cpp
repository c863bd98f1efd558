#include "schedulers/placement/balanced_allocation.hpp"

#include <algorithm>
#include <cmath>

namespace chorus {
namespace {

// held after placement / capacity, at most 1.
double held_fraction(double free, double request, double capacity) {
  return std::min((capacity - free + request) / capacity, 1.0);
}

}  // namespace

double balanced_allocation_score(const TaskSpec& task, const NodeView& node) {
  const Resources need = task.total();
  const Resources& cap = node.info->capacity;
  double f[3];
  int n = 0;
  if (cap.cores > 0) f[n++] = held_fraction(node.free.cores, need.cores, cap.cores);
  if (cap.memory_mb > 0) {
    f[n++] = held_fraction(static_cast<double>(node.free.memory_mb),
                           static_cast<double>(need.memory_mb), static_cast<double>(cap.memory_mb));
  }
  if (need.gpus > 0 && cap.gpus > 0) f[n++] = held_fraction(node.free.gpus, need.gpus, cap.gpus);
  double spread = 0;
  if (n == 2) {
    spread = std::abs(f[0] - f[1]) / 2;
  } else if (n == 3) {
    const double mean = (f[0] + f[1] + f[2]) / 3;
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += (f[i] - mean) * (f[i] - mean);
    spread = std::sqrt(sum / n);
  }
  return 1 - spread;
}

}  // namespace chorus
