// RoundBlueprint: what a repeat group needs to build its rounds 2..max_rounds after loading is
// over. Holds copies of the group's templates and round 1's dependency structure (the YAML
// document and the graph builder are gone by then), so RepeatGroup::expand can be a closure over
// a shared, immutable blueprint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

class RoundBlueprint {
 public:
  // One task of a round, in round 1's order.
  struct Member {
    std::uint32_t tmpl = 0;    // index into the blueprint's templates
    std::uint64_t member = 0;  // member of that template's sweep (round excluded from the count)
    std::vector<std::uint32_t> local_after;  // indices of same-round tasks it waits for
    std::vector<TaskId> after;               // tasks outside the group it waits for
  };

  // `templates`: the group's, `round` first in each sweep. `uses`: per template, its services.
  RoundBlueprint(std::string group, int max_rounds, std::string workdir,
                 std::vector<TaskTemplate> templates, std::vector<std::vector<ServiceId>> uses,
                 std::vector<Member> members)
      : group_(std::move(group)),
        max_rounds_(max_rounds),
        workdir_(std::move(workdir)),
        templates_(std::move(templates)),
        uses_(std::move(uses)),
        members_(std::move(members)) {}

  // The tasks of round `round`: the same tasks and dependencies as round 1, named and
  // substituted with {round} = `round`. Deterministic (resume matches tasks by name).
  // invalid_argument when `round` is not in 2..max_rounds.
  Result<RoundPlan> expand(int round) const;

  std::size_t size() const { return members_.size(); }

 private:
  std::string group_;
  int max_rounds_;
  std::string workdir_;
  std::vector<TaskTemplate> templates_;
  std::vector<std::vector<ServiceId>> uses_;
  std::vector<Member> members_;
};

}  // namespace chorus
