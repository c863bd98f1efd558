#include "schedulers/placement/least_allocated.hpp"

#include <algorithm>

namespace chorus {
namespace {

// free after placement / capacity, in [0, 1].
double free_fraction(double free, double request, double capacity) {
  return std::clamp((free - request) / capacity, 0.0, 1.0);
}

}  // namespace

double least_allocated_score(const TaskSpec& task, const NodeView& node) {
  const Resources need = task.total();
  const Resources& cap = node.info->capacity;
  double sum = 0;
  int counted = 0;
  if (cap.cores > 0) {
    sum += free_fraction(node.free.cores, need.cores, cap.cores);
    ++counted;
  }
  if (cap.memory_mb > 0) {
    sum += free_fraction(static_cast<double>(node.free.memory_mb),
                         static_cast<double>(need.memory_mb), static_cast<double>(cap.memory_mb));
    ++counted;
  }
  if (need.gpus > 0 && cap.gpus > 0) {
    sum += free_fraction(node.free.gpus, need.gpus, cap.gpus);
    ++counted;
  }
  return counted == 0 ? 0 : sum / counted;
}

}  // namespace chorus
