// RepeatDriver: runs a graph's repeat groups (core/workflow_graph.hpp's RepeatGroup) round by
// round through the coordinator's completion handler.
//
// When every task of round R succeeded it asks the group's `until(R)`: done (or R was the last
// allowed round) releases the group's gate, so the tasks after the group start; not done submits
// round R+1 (RepeatGroup::expand) and makes the gate wait for it too. A task of the round that
// fails for good fails the group through the gate's dependencies; an error from until/expand
// fails the gate with that message.
//
// Quorum rounds (RepeatGroup::quorum, docs/quorum-workflows.md): the group's quorum sweep has
// one QuorumPolicy for the whole run. A round begins on it when the round is submitted (round 1:
// at the run's first loop turn); each member that succeeds is an arrival (the loop's time in
// seconds, no gradient statistics: kNoStat); the policy's deadline is asked every loop turn
// (on_turn). At the first `close` (or when all n arrived) the round closes: the driver writes
// RepeatGroup::quorum->file, drops the members still unfinished (TaskSubmitter::drop: cancelled
// "dropped by quorum", which their dependents count as done), and ends the round on the policy
// with the arrival times (kNever for the dropped). A member that fails for good (its retries
// spent) is a failure as outside a quorum: it fails the round, and the group, through the gate.
//
// Resume needs nothing special: the coordinator calls the handler for every task skipped as done
// (succeeded or dropped), in task order, so rounds are submitted again under the same names, the
// finished ones are skipped, and the run continues at the first round that did not finish. A
// replayed round's arrivals come in at the resumed session's time, in task order; a round whose
// members all finished before stays closed with what it had (dropped members are not rerun).
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/workflow_graph.hpp"
#include "runtime/coordinator.hpp"
#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

class RepeatDriver {
 public:
  // `graph` must outlive the driver. `quorums[g]` is the policy of graph.repeats[g]'s quorum
  // sweep (null, or missing, for a group without one: such a group's quorum sweep waits for all).
  explicit RepeatDriver(const WorkflowGraph& graph,
                        std::vector<std::unique_ptr<QuorumPolicy>> quorums = {});

  // Call from CoordinatorOptions::on_task_done for every task.
  void on_task_done(const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter);

  // Call from CoordinatorOptions::on_turn (every loop turn): begins round 1's quorum on the
  // first call, closes rounds whose policy says so at its deadline, and returns the earliest
  // deadline of the open quorum rounds. A few comparisons per group; no allocation.
  std::optional<TimePoint> on_turn(TimePoint now, TaskSubmitter& submitter);

  // Whether any group has a quorum policy (the runner then sets on_turn).
  bool has_quorums() const;

 private:
  // A group's quorum sweep in its current round.
  struct Quorum {
    std::unique_ptr<QuorumPolicy> policy;
    std::vector<TaskId> ids;       // member i's task this round
    std::vector<double> arrivals;  // seconds on the driver's clock; kNever until it arrived
    std::vector<int> order;        // the workers that arrived, in arrival order
    double start = 0;
    int received = 0;
    bool open = false;  // begun and not closed
    bool begun = false;
  };
  struct Group {
    const RepeatGroup* spec = nullptr;
    int round = 1;
    std::size_t outstanding = 0;  // tasks of the current round not yet succeeded (or dropped)
    Quorum quorum;
  };
  struct Member {
    std::uint32_t group = 0;
    int round = 0;
    int worker = -1;  // index in the group's quorum sweep, -1 for other tasks
  };

  void round_done(Group& group, std::uint32_t index, TaskSubmitter& submitter);
  Status submit_round(Group& group, std::uint32_t index, const RoundPlan& plan,
                      TaskSubmitter& submitter);
  void begin_quorum(Group& group, const std::vector<TaskId>& round_ids, TaskSubmitter& submitter);
  void arrive(Group& group, int worker, TaskSubmitter& submitter);
  void close_quorum(Group& group, double at, TaskSubmitter& submitter);
  double seconds(TimePoint t);

  std::vector<Group> groups_;
  std::unordered_map<TaskId, Member> members_;
  std::optional<TimePoint> epoch_;  // the driver's clock's zero: its first call
  bool first_turn_ = true;
};

}  // namespace chorus
