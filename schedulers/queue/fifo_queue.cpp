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
  if (passed_.empty()) return order_.front();
  // Behind the passed tasks: the first entry that is neither removed nor passed. Tasks started
  // from behind a passed one stay in the deque (removed) until they reach the head, hence the
  // bound: past it the order is strict again.
  const std::size_t end = std::min(order_.size(), kScan);
  for (std::size_t i = 0; i < end; ++i) {
    const TaskId t = order_[i];
    if (!removed_[t] && !passed_.contains(t)) return t;
  }
  return std::nullopt;
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
