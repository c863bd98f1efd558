#include "runtime/task_table.hpp"

namespace chorus {

void TaskTable::reset(const std::vector<TaskSpec>& tasks) {
  const auto n = tasks.size();
  base_count_ = n;
  rt_.clear();
  for (std::size_t i = 0; i < n; ++i) rt_.push_back(TaskRuntime{});
  extra_dependents_.clear();
  in_.fill(0);
  service_in_.fill(0);
  service_tasks_ = 0;
  skipped_ = 0;
  dropped_ = 0;
  error_ = {};
  for (const auto& t : tasks) {
    rt_[t.id].held = t.held;
    rt_[t.id].service = t.kind == TaskKind::service;
    service_tasks_ += t.kind == TaskKind::service;
  }
  in_[static_cast<std::size_t>(TaskState::pending)] = static_cast<std::int64_t>(n - service_tasks_);
  service_in_[static_cast<std::size_t>(TaskState::pending)] =
      static_cast<std::int64_t>(service_tasks_);
  dep_offsets_.assign(n + 1, 0);
  for (const auto& t : tasks) {
    for (TaskId d : t.after) ++dep_offsets_[d + 1];
  }
  for (std::size_t i = 0; i < n; ++i) dep_offsets_[i + 1] += dep_offsets_[i];
  dep_targets_.resize(dep_offsets_[n]);
  std::vector<std::uint32_t> fill(dep_offsets_.begin(), dep_offsets_.end() - 1);
  for (const auto& t : tasks) {
    for (TaskId d : t.after) dep_targets_[fill[d]++] = t.id;
  }
}

TaskId TaskTable::add(const TaskSpec& spec) {
  const auto id = static_cast<TaskId>(rt_.size());
  TaskRuntime& r = rt_.push_back(TaskRuntime{});
  r.held = spec.held;
  r.service = spec.kind == TaskKind::service;
  service_tasks_ += r.service;
  ++(r.service ? service_in_ : in_)[static_cast<std::size_t>(TaskState::pending)];
  return id;
}

void TaskTable::skip_dropped(TaskId id) {
  TaskRuntime& r = rt_[id];
  if (r.state != TaskState::pending) {
    refuse(id, r.state, TaskState::cancelled);
    return;
  }
  auto& in = r.service ? service_in_ : in_;
  --in[static_cast<std::size_t>(TaskState::pending)];
  ++in[static_cast<std::size_t>(TaskState::cancelled)];
  r.state = TaskState::cancelled;
  mark_dropped(id);
}

void TaskTable::skip_succeeded(TaskId id) {
  TaskRuntime& r = rt_[id];
  if (r.state != TaskState::pending) {
    refuse(id, r.state, TaskState::succeeded);
    return;
  }
  auto& in = r.service ? service_in_ : in_;
  --in[static_cast<std::size_t>(TaskState::pending)];
  ++in[static_cast<std::size_t>(TaskState::succeeded)];
  r.state = TaskState::succeeded;
  ++skipped_;
}

void TaskTable::refuse(TaskId id, TaskState from, TaskState to) {
  if (error_.ok()) {
    error_ = internal_error("task id " + std::to_string(id) + ": the coordinator tried the move " +
                            to_string(from) + " -> " + to_string(to) +
                            ", which the task state machine forbids");
  }
}

}  // namespace chorus
