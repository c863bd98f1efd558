#include "schedulers/planners/graph_planner.hpp"

#include "schedulers/planners/heft.hpp"
#include "schedulers/planners/spwd_planner.hpp"

namespace chorus {

Result<std::unique_ptr<GraphPlanner>> make_planner(std::string_view name, PlanOptions options) {
  std::unique_ptr<GraphPlanner> p;
  if (name == "heft") {
    p = std::make_unique<HeftPlanner>(std::move(options));
  } else if (name == "spwd") {
    p = std::make_unique<SpwdPlanner>(std::move(options));
  } else if (name == "milp") {
    p = std::make_unique<MilpPlanner>(std::move(options));
  } else {
    return not_found("unknown planner '" + std::string(name) + "' (use heft, spwd or milp)");
  }
  return p;
}

}  // namespace chorus
