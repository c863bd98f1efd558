#include "workflows/round_blueprint.hpp"

#include "workflows/sweep.hpp"
#include "workflows/task_instance.hpp"

namespace chorus {

Result<RoundPlan> RoundBlueprint::expand(int round) const {
  if (round < 2 || round > max_rounds_) {
    return invalid_argument("repeat group '" + group_ + "' has rounds 2 to " +
                            std::to_string(max_rounds_) + " to build, not round " +
                            std::to_string(round));
  }
  const std::string value = std::to_string(round);
  RoundPlan plan;
  plan.tasks.reserve(members_.size());
  plan.local_after.reserve(members_.size());
  for (const Member& m : members_) {
    const TaskTemplate& t = templates_[m.tmpl];
    TaskSpec spec;
    spec.params = sweep_member(t.sweep, m.member);
    spec.params.front().second = value;  // `round` is the first variable of every group task
    spec.name = member_name(t.name, spec.params);
    if (Status s = instantiate_task(t, spec.params, workdir_, spec, nullptr); !s.ok()) {
      return invalid_argument("repeat group '" + group_ + "', round " + value + ": " + s.message());
    }
    spec.uses = uses_[m.tmpl];
    spec.after = m.after;
    plan.tasks.push_back(std::move(spec));
    plan.local_after.push_back(m.local_after);
  }
  return plan;
}

}  // namespace chorus
