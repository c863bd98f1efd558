#include "runtime/repeat_driver.hpp"

namespace chorus {

RepeatDriver::RepeatDriver(const WorkflowGraph& graph) {
  groups_.reserve(graph.repeats.size());
  for (const auto& g : graph.repeats) {
    const auto index = static_cast<std::uint32_t>(groups_.size());
    groups_.push_back(Group{&g, 1, g.first_round.size()});
    for (TaskId id : g.first_round) members_.emplace(id, Member{index, 1});
  }
}

void RepeatDriver::on_task_done(const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter) {
  auto it = members_.find(task.id);
  if (it == members_.end()) return;
  const Member m = it->second;
  Group& group = groups_[m.group];
  // A failure reaches the gate through its dependencies; nothing more starts in this group.
  if (outcome != TaskState::succeeded || m.round != group.round) return;
  if (--group.outstanding == 0) round_done(group, m.group, submitter);
}

void RepeatDriver::round_done(Group& group, std::uint32_t index, TaskSubmitter& submitter) {
  const RepeatGroup& spec = *group.spec;
  const std::string where =
      "repeat group '" + spec.name + "', round " + std::to_string(group.round);
  while (true) {
    auto done = spec.until(group.round);
    if (!done.ok()) {
      (void)submitter.fail_unstarted(spec.gate, where + ": " + done.status().message());
      return;
    }
    if (*done || group.round >= spec.max_rounds) {
      (void)submitter.release(spec.gate);
      return;
    }
    auto plan = spec.expand(group.round + 1);
    if (!plan.ok()) {
      (void)submitter.fail_unstarted(spec.gate, where + ": " + plan.status().message());
      return;
    }
    group.round += 1;
    if (Status s = submit_round(group, index, *plan, submitter); !s.ok()) {
      (void)submitter.fail_unstarted(spec.gate, "repeat group '" + spec.name + "', round " +
                                                    std::to_string(group.round) + ": " +
                                                    s.message());
      return;
    }
    if (group.outstanding > 0) return;
    // Every task of the new round was already done (an empty round): ask again at once.
  }
}

Status RepeatDriver::submit_round(Group& group, std::uint32_t index, const RoundPlan& plan,
                                  TaskSubmitter& submitter) {
  const std::size_t n = plan.tasks.size();
  if (plan.local_after.size() != n && !plan.local_after.empty()) {
    return internal_error("the round's dependency list does not match its tasks");
  }
  // Submit in dependency order: a task's in-round dependencies need their ids first.
  std::vector<TaskId> ids(n, kNoTask);
  std::size_t placed = 0;
  group.outstanding = 0;
  while (placed < n) {
    bool progress = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (ids[i] != kNoTask) continue;
      TaskSpec spec = plan.tasks[i];
      bool ready = true;
      if (!plan.local_after.empty()) {
        for (std::uint32_t d : plan.local_after[i]) {
          if (d >= n) return internal_error("task '" + spec.name + "' depends on a bad index");
          if (ids[d] == kNoTask) {
            ready = false;
            break;
          }
          spec.after.push_back(ids[d]);
        }
      }
      if (!ready) continue;
      auto id = submitter.submit(std::move(spec));
      if (!id.ok()) return id.status();
      ids[i] = *id;
      members_.emplace(*id, Member{index, group.round});
      ++group.outstanding;
      ++placed;
      progress = true;
      if (Status s = submitter.add_dependency(group.spec->gate, *id); !s.ok()) return s;
    }
    if (!progress) return invalid_argument("the round's tasks depend on each other in a cycle");
  }
  return {};
}

}  // namespace chorus
