// FIFO: tasks in the order they became ready. Strict: the coordinator does not skip past a head
// task that does not fit yet (no backfill), so large tasks are never starved by small ones.
#pragma once

#include <deque>
#include <vector>

#include "schedulers/policy.hpp"

namespace chorus {

class FifoQueue final : public QueuePolicy {
 public:
  std::string_view name() const override { return "fifo"; }
  void on_ready(const TaskSpec& task, TimePoint now) override;
  std::optional<TaskId> next(const ClusterView& cluster) override;
  void on_start(const TaskSpec& task, TimePoint now) override;
  void remove(TaskId task) override;
  std::size_t size() const override { return size_; }

 private:
  void drop_removed_head();

  std::deque<TaskId> order_;
  std::vector<bool> removed_;  // by task id; lazily skipped at the head
  std::size_t size_ = 0;
};

}  // namespace chorus
