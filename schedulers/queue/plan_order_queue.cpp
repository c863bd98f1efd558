#include "schedulers/queue/plan_order_queue.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

namespace chorus {
namespace {

bool planned_on(const PlannedTask& planned, const NodeView& node) {
  return std::find(planned.nodes.begin(), planned.nodes.end(), node.info->name) !=
         planned.nodes.end();
}

}  // namespace

void PlanOrderQueue::on_ready(const TaskSpec& task, TimePoint /*now*/) {
  if (key_of_.count(task.id) != 0) return;
  const PlannedTask* planned = plan_->find(task.id);
  const Key key = planned != nullptr ? Key{1, planned->position} : Key{0, arrivals_++};
  order_.emplace(key, Entry{task.id, task.total()});
  key_of_.emplace(task.id, key);
}

std::optional<TaskId> PlanOrderQueue::next(const ClusterView& cluster) {
  if (order_.empty()) return std::nullopt;
  const std::size_t n = cluster.nodes.size();
  std::vector<char> reserved(n, 0);
  std::size_t reserved_count = 0;
  std::vector<std::size_t> allowed;
  for (const auto& [key, entry] : order_) {
    allowed.clear();
    const PlannedTask* planned = plan_->find(entry.id);
    for (std::size_t i = 0; i < n; ++i) {
      if (planned == nullptr || planned_on(*planned, cluster.nodes[i])) allowed.push_back(i);
    }
    for (std::size_t i : allowed) {
      if (reserved[i] == 0 && entry.need.fits_in(cluster.nodes[i].free)) return entry.id;
    }
    for (std::size_t i : allowed) {
      if (reserved[i] == 0 && entry.need.fits_in(cluster.nodes[i].info->capacity)) {
        reserved[i] = 1;
        ++reserved_count;
      }
    }
    if (reserved_count == n) break;
  }
  return order_.begin()->second.id;
}

void PlanOrderQueue::on_start(const TaskSpec& task, TimePoint /*now*/) {
  remove(task.id);
}

void PlanOrderQueue::remove(TaskId task) {
  auto it = key_of_.find(task);
  if (it == key_of_.end()) return;
  order_.erase(it->second);
  key_of_.erase(it);
}

}  // namespace chorus
