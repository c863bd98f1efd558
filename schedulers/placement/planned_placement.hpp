// PlannedPlacement ("planned"): puts each task only on the node(s) a graph planner chose for it
// (TaskPlan). Elsewhere it answers "not now" (Fit::later; "never" where the task could never fit
// anyway), so a planned task waits for its node instead of drifting to another one. A task the
// plan does not cover, or whose planned nodes are not in the cluster, may go to any node with
// room, first fit. Among several planned nodes (SPWD plans machine types, which map to all the
// nodes of that type) the first with room wins.
#pragma once

#include <memory>

#include "schedulers/policy.hpp"
#include "schedulers/task_plan.hpp"

namespace chorus {

class PlannedPlacement final : public PlacementPolicy {
 public:
  explicit PlannedPlacement(std::shared_ptr<const TaskPlan> plan) : plan_(std::move(plan)) {}
  std::string_view name() const override { return "planned"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override;
  // Constant: the coordinator keeps the first of equal scores.
  double score(const TaskSpec& /*task*/, const NodeView& /*node*/) const override { return 0; }

 private:
  std::shared_ptr<const TaskPlan> plan_;
};

}  // namespace chorus
