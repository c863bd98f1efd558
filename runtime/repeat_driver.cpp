#include "runtime/repeat_driver.hpp"

#include <algorithm>

#include "runtime/quorum_record.hpp"

namespace chorus {
namespace {

std::string round_file(const std::string& pattern, int round) {
  std::string out = pattern;
  const std::string value = std::to_string(round);
  for (auto at = out.find("{round}"); at != std::string::npos; at = out.find("{round}", at)) {
    out.replace(at, 7, value);
    at += value.size();
  }
  return out;
}

}  // namespace

RepeatDriver::RepeatDriver(const WorkflowGraph& graph,
                           std::vector<std::unique_ptr<QuorumPolicy>> quorums) {
  groups_.reserve(graph.repeats.size());
  for (std::size_t gi = 0; gi < graph.repeats.size(); ++gi) {
    const RepeatGroup& g = graph.repeats[gi];
    const auto index = static_cast<std::uint32_t>(groups_.size());
    Group& group = groups_.emplace_back();
    group.spec = &g;
    group.outstanding = g.first_round.size();
    if (g.quorum && gi < quorums.size() && quorums[gi] != nullptr) {
      group.quorum.policy = std::move(quorums[gi]);
      group.quorum.ids.assign(g.quorum->members.size(), kNoTask);
      group.quorum.arrivals.assign(g.quorum->members.size(), kNever);
      group.quorum.order.reserve(g.quorum->members.size());
    }
    for (TaskId id : g.first_round) members_.emplace(id, Member{index, 1, -1});
    if (group.quorum.policy) {
      for (std::size_t w = 0; w < g.quorum->members.size(); ++w) {
        const std::uint32_t local = g.quorum->members[w];
        if (local < g.first_round.size()) {
          members_[g.first_round[local]].worker = static_cast<int>(w);
        }
      }
    }
  }
}

bool RepeatDriver::has_quorums() const {
  return std::any_of(groups_.begin(), groups_.end(),
                     [](const Group& g) { return g.quorum.policy != nullptr; });
}

double RepeatDriver::seconds(TimePoint t) {
  if (!epoch_) epoch_ = t;
  return std::chrono::duration<double>(t - *epoch_).count();
}

std::optional<TimePoint> RepeatDriver::on_turn(TimePoint now, TaskSubmitter& submitter) {
  if (first_turn_) {
    first_turn_ = false;
    for (Group& g : groups_) {
      if (g.quorum.policy && !g.quorum.begun && g.round == 1) {
        begin_quorum(g, g.spec->first_round, submitter);
      }
    }
  }
  const double t = seconds(now);
  double next = kNever;
  for (Group& g : groups_) {
    Quorum& q = g.quorum;
    if (!q.open) continue;
    if (q.policy->deadline() <= t && q.policy->on_tick(t) == QuorumVerdict::close &&
        q.received > 0) {
      close_quorum(g, t, submitter);
      continue;
    }
    // A deadline already past (a close refused for want of results) is asked again next turn,
    // not waited for: it would spin the loop.
    if (const double d = q.policy->deadline(); d > t) next = std::min(next, d);
  }
  if (next == kNever) return std::nullopt;
  return *epoch_ + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(next));
}

void RepeatDriver::begin_quorum(Group& group, const std::vector<TaskId>& round_ids,
                                TaskSubmitter& submitter) {
  Quorum& q = group.quorum;
  const QuorumSweep& sweep = *group.spec->quorum;
  for (std::size_t w = 0; w < sweep.members.size(); ++w) {
    q.ids[w] = sweep.members[w] < round_ids.size() ? round_ids[sweep.members[w]] : kNoTask;
  }
  std::fill(q.arrivals.begin(), q.arrivals.end(), kNever);
  q.order.clear();
  q.received = 0;
  q.start = seconds(submitter.now());
  q.begun = true;
  q.open = true;
  RoundStart start;
  start.round = group.round;
  start.n = static_cast<int>(sweep.members.size());
  start.time = q.start;
  q.policy->begin(start);
}

void RepeatDriver::arrive(Group& group, int worker, TaskSubmitter& submitter) {
  Quorum& q = group.quorum;
  if (!q.open) return;
  const double t = seconds(submitter.now());
  q.arrivals[static_cast<std::size_t>(worker)] = t;
  q.order.push_back(worker);
  ++q.received;
  Arrival a;
  a.worker = worker;
  a.time = t;
  a.received = q.received;
  const bool close = q.policy->on_arrival(a) == QuorumVerdict::close;
  if (close || q.received == static_cast<int>(q.ids.size())) close_quorum(group, t, submitter);
}

void RepeatDriver::close_quorum(Group& group, double at, TaskSubmitter& submitter) {
  Quorum& q = group.quorum;
  q.open = false;
  const RepeatGroup& spec = *group.spec;
  const QuorumSweep& sweep = *spec.quorum;
  const int n = static_cast<int>(q.ids.size());
  const std::string why = "round " + std::to_string(group.round) + " of '" + spec.name +
                          "' closed with " + std::to_string(q.received) + " of " +
                          std::to_string(n);
  QuorumRecord record;
  record.group = spec.name;
  record.sweep = sweep.name;
  record.policy = sweep.choice.policy;
  record.round = group.round;
  record.n = n;
  record.target = q.policy->target();
  record.closed_after_s = at - q.start;
  // Drop first: whoever is dropped is in the record as dropped (a member finished before, whose
  // arrival a resumed session has not replayed yet, is late).
  for (std::size_t w = 0; w < q.ids.size(); ++w) {
    if (q.arrivals[w] == kNever && q.ids[w] != kNoTask) (void)submitter.drop(q.ids[w], why);
  }
  if (!sweep.file.empty()) {
    const auto& tasks_of = [&](TaskId id) -> std::string {
      return id == kNoTask ? std::string() : std::string(submitter.task_name(id));
    };
    for (int w : q.order) {
      const auto i = static_cast<std::size_t>(w);
      record.used.push_back({tasks_of(q.ids[i]), q.arrivals[i] - q.start});
    }
    for (std::size_t w = 0; w < q.ids.size(); ++w) {
      if (q.arrivals[w] != kNever || q.ids[w] == kNoTask) continue;
      (submitter.dropped(q.ids[w]) ? record.dropped : record.late).push_back({tasks_of(q.ids[w])});
    }
    if (Status s = write_quorum_record(round_file(sweep.file, group.round), record); !s.ok()) {
      (void)submitter.fail_unstarted(spec.gate, "repeat group '" + spec.name + "', round " +
                                                    std::to_string(group.round) + ": " +
                                                    s.message());
    }
  }
  RoundEnd end;
  end.round = group.round;
  end.start = q.start;
  end.closed_at = at;
  end.used = q.received;
  end.arrivals = q.arrivals;
  end.timed = false;
  q.policy->end(end);
}

void RepeatDriver::on_task_done(const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter) {
  auto it = members_.find(task.id);
  if (it == members_.end()) return;
  const Member m = it->second;
  Group& group = groups_[m.group];
  if (m.round != group.round) return;
  const bool dropped = outcome == TaskState::cancelled && submitter.dropped(task.id);
  // A failure reaches the gate through its dependencies; nothing more starts in this group.
  if (outcome != TaskState::succeeded && !dropped) return;
  if (m.worker >= 0 && outcome == TaskState::succeeded) {
    if (!group.quorum.begun) begin_quorum(group, group.spec->first_round, submitter);
    arrive(group, m.worker, submitter);
  }
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
      members_.emplace(*id, Member{index, group.round, -1});
      ++group.outstanding;
      ++placed;
      progress = true;
      if (Status s = submitter.add_dependency(group.spec->gate, *id); !s.ok()) return s;
    }
    if (!progress) return invalid_argument("the round's tasks depend on each other in a cycle");
  }
  if (group.quorum.policy) {
    const QuorumSweep& sweep = *group.spec->quorum;
    for (std::size_t w = 0; w < sweep.members.size(); ++w) {
      if (sweep.members[w] < n) members_[ids[sweep.members[w]]].worker = static_cast<int>(w);
    }
    begin_quorum(group, ids, submitter);
  }
  return {};
}

}  // namespace chorus
