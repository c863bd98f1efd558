// PlanOrderQueue ("plan-order"): releases ready tasks in a graph planner's order (TaskPlan
// positions: planned start time, then HEFT upward rank).
//
// Design assumptions:
// - The coordinator is strict: it stops dispatching at a head task that fits nowhere now. A plan
//   pins tasks to nodes, so one global head would let a task waiting for its node hold back work
//   planned for idle nodes. next() therefore looks, in plan order, for the first ready task that
//   fits now on one of its planned nodes, and a task that has to wait reserves its nodes: nothing
//   behind it in the order may start there first (per node, the plan's order is kept and a wide
//   task is not starved by narrow ones).
// - Tasks the plan does not cover (service replicas, later rounds of a repeat group, tasks
//   submitted while running) come first, in the order they became ready, and may use any node:
//   the plan cannot rank them, and in the known cases planned work waits for them.
// - When nothing fits now, next() returns the first task in order, so the coordinator sees "not
//   now" (or "never", and fails it) exactly as with a single-queue policy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>

#include "schedulers/policy.hpp"
#include "schedulers/task_plan.hpp"

namespace chorus {

class PlanOrderQueue final : public QueuePolicy {
 public:
  explicit PlanOrderQueue(std::shared_ptr<const TaskPlan> plan) : plan_(std::move(plan)) {}
  std::string_view name() const override { return "plan-order"; }
  void on_ready(const TaskSpec& task, TimePoint now) override;
  std::optional<TaskId> next(const ClusterView& cluster) override;
  void on_start(const TaskSpec& task, TimePoint now) override;
  void remove(TaskId task) override;
  std::size_t size() const override { return order_.size(); }

 private:
  // (0, arrival) for tasks the plan does not cover, (1, position) for covered ones.
  using Key = std::pair<int, std::uint64_t>;
  struct Entry {
    TaskId id = kNoTask;
    Resources need;
  };

  std::shared_ptr<const TaskPlan> plan_;
  std::map<Key, Entry> order_;
  std::unordered_map<TaskId, Key> key_of_;
  std::uint64_t arrivals_ = 0;
};

}  // namespace chorus
