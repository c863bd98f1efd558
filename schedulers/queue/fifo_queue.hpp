// FIFO: tasks in the order they became ready. Strict: the coordinator does not skip past a head
// task that does not fit yet (no backfill), so large tasks are never starved by small ones. A
// task that waits for a busy node by its placement policy's choice is passed over (policy.hpp):
// up to PassedTasks::kMax per dispatch pass, the scan for the next task bounded by kScan entries.
#pragma once

#include <deque>
#include <vector>

#include "schedulers/policy.hpp"
#include "schedulers/queue/passed_tasks.hpp"

namespace chorus {

class FifoQueue final : public QueuePolicy {
 public:
  std::string_view name() const override { return "fifo"; }
  void on_ready(const TaskSpec& task, TimePoint now) override;
  std::optional<TaskId> next(const ClusterView& cluster) override;
  void on_start(const TaskSpec& task, TimePoint now) override;
  void remove(TaskId task) override;
  std::size_t size() const override { return size_; }
  void begin_pass() override { passed_.clear(); }
  bool pass_over(TaskId task) override { return passed_.add(task); }

  static constexpr std::size_t kScan = 256;

 private:
  void drop_removed_head();

  std::deque<TaskId> order_;
  std::vector<bool> removed_;  // by task id; lazily skipped at the head
  std::size_t size_ = 0;
  PassedTasks passed_;
};

}  // namespace chorus
