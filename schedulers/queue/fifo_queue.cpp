#include "schedulers/queue/fifo_queue.hpp"

namespace chorus {

void FifoQueue::on_ready(const TaskSpec& task, TimePoint /*now*/) {
  if (task.id >= removed_.size())
    removed_.resize(std::max<std::size_t>(task.id + 1, removed_.size() * 2));
  removed_[task.id] = false;
  order_.push_back(task.id);
  ++size_;
}

void FifoQueue::drop_removed_head() {
  while (!order_.empty() && removed_[order_.front()]) order_.pop_front();
}

std::optional<TaskId> FifoQueue::next(const ClusterView& /*cluster*/) {
  drop_removed_head();
  if (order_.empty()) return std::nullopt;
  return order_.front();
}

void FifoQueue::on_start(const TaskSpec& task, TimePoint /*now*/) {
  if (!order_.empty() && order_.front() == task.id) {
    order_.pop_front();
    --size_;
  } else {
    remove(task.id);
  }
}

void FifoQueue::remove(TaskId task) {
  if (task < removed_.size() && !removed_[task]) {
    removed_[task] = true;
    --size_;
  }
}

}  // namespace chorus
