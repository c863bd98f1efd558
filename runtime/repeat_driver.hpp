// RepeatDriver: runs a graph's repeat groups (core/workflow_graph.hpp's RepeatGroup) round by
// round through the coordinator's completion handler.
//
// When every task of round R succeeded it asks the group's `until(R)`: done (or R was the last
// allowed round) releases the group's gate, so the tasks after the group start; not done submits
// round R+1 (RepeatGroup::expand) and makes the gate wait for it too. A task of the round that
// fails for good fails the group through the gate's dependencies; an error from until/expand
// fails the gate with that message.
//
// Resume needs nothing special: the coordinator calls the handler for every task skipped as done,
// in task order, so rounds are submitted again under the same names, the finished ones are
// skipped, and the run continues at the first round that did not finish.
#pragma once

#include <unordered_map>
#include <vector>

#include "core/workflow_graph.hpp"
#include "runtime/coordinator.hpp"

namespace chorus {

class RepeatDriver {
 public:
  // `graph` must outlive the driver.
  explicit RepeatDriver(const WorkflowGraph& graph);

  // Call from CoordinatorOptions::on_task_done for every task.
  void on_task_done(const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter);

 private:
  struct Group {
    const RepeatGroup* spec = nullptr;
    int round = 1;
    std::size_t outstanding = 0;  // tasks of the current round not yet succeeded
  };
  struct Member {
    std::uint32_t group = 0;
    int round = 0;
  };

  void round_done(Group& group, std::uint32_t index, TaskSubmitter& submitter);
  Status submit_round(Group& group, std::uint32_t index, const RoundPlan& plan,
                      TaskSubmitter& submitter);

  std::vector<Group> groups_;
  std::unordered_map<TaskId, Member> members_;
};

}  // namespace chorus
