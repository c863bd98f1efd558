// PassedTasks: the tasks a queue policy passed over in one dispatch pass (QueuePolicy::pass_over,
// schedulers/policy.hpp): a few ids, searched linearly. Bounded: past kMax the caller keeps the
// strict order, and a task named twice in one pass (a queue bug) stops the pass rather than
// looping.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/task_spec.hpp"

namespace chorus {

class PassedTasks {
 public:
  static constexpr std::size_t kMax = 16;

  void clear() { ids_.clear(); }
  bool empty() const { return ids_.empty(); }
  bool contains(TaskId task) const {
    return std::find(ids_.begin(), ids_.end(), task) != ids_.end();
  }
  // pass_over's answer: true when `task` is now passed over.
  bool add(TaskId task) {
    if (ids_.size() == kMax || contains(task)) return false;
    ids_.push_back(task);
    return true;
  }

 private:
  std::vector<TaskId> ids_;
};

}  // namespace chorus
