// TaskFifo: task ids in arrival order for the queue policies' per-job queues. pop_front() moves a
// cursor; the storage is kept when the FIFO empties, so a recycled job slot allocates nothing
// (std::deque allocates a block on construction, which dominated the cost of a decision).
#pragma once

#include <cstddef>
#include <vector>

#include "core/task_spec.hpp"

namespace chorus {

class TaskFifo {
 public:
  bool empty() const { return head_ == ids_.size(); }
  TaskId front() const { return ids_[head_]; }
  void push_back(TaskId t) { ids_.push_back(t); }
  void pop_front() {
    if (++head_ == ids_.size()) clear();
  }
  void clear() {
    ids_.clear();
    head_ = 0;
  }

 private:
  std::vector<TaskId> ids_;
  std::size_t head_ = 0;
};

}  // namespace chorus
