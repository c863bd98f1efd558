#include "schedulers/placement/planned_placement.hpp"

#include <algorithm>

namespace chorus {

Fit PlannedPlacement::filter(const TaskSpec& task, const NodeView& node) const {
  const Fit fit = fit_by_resources(task, node);
  const PlannedTask* planned = plan_->find(task.id);
  if (planned == nullptr) return fit;
  const auto& nodes = planned->nodes;
  if (std::find(nodes.begin(), nodes.end(), node.info->name) != nodes.end()) return fit;
  return fit == Fit::never ? Fit::never : Fit::later;
}

}  // namespace chorus
