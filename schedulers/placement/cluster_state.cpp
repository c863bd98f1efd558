#include "schedulers/placement/cluster_state.hpp"

#include <utility>

namespace chorus {

ClusterState::ClusterState(std::vector<NodeInfo> nodes)
    : nodes_(std::move(nodes)), facts_(nodes_.size()) {
  views_.reserve(nodes_.size());
  for (const auto& n : nodes_) views_.push_back(NodeView{&n, n.capacity, 0});
  bind_views();
}

ClusterState::ClusterState(const ClusterState& other)
    : nodes_(other.nodes_), facts_(other.facts_), views_(other.views_) {
  bind_views();
}

ClusterState& ClusterState::operator=(const ClusterState& other) {
  if (this != &other) {
    nodes_ = other.nodes_;
    facts_ = other.facts_;
    views_ = other.views_;
    bind_views();
  }
  return *this;
}

void ClusterState::bind_views() {
  for (std::size_t i = 0; i < views_.size(); ++i) {
    views_[i].info = &nodes_[i];
    views_[i].index = static_cast<int>(i);
    views_[i].facts = &facts_[i];
  }
}

void ClusterState::reserve(const TaskSpec& task, const Placement& where) {
  if (where.shares.empty()) {
    NodeView& v = views_[static_cast<std::size_t>(where.node)];
    v.free -= task.total();
    v.running += 1;
    return;
  }
  for (const auto& share : where.shares) {
    NodeView& v = views_[static_cast<std::size_t>(share.node)];
    v.free -= task.per_rank * share.ranks;
    v.running += 1;
  }
}

void ClusterState::release(const TaskSpec& task, const Placement& where) {
  if (where.shares.empty()) {
    NodeView& v = views_[static_cast<std::size_t>(where.node)];
    v.free += task.total();
    v.running -= 1;
    return;
  }
  for (const auto& share : where.shares) {
    NodeView& v = views_[static_cast<std::size_t>(share.node)];
    v.free += task.per_rank * share.ranks;
    v.running -= 1;
  }
}

Resources ClusterState::largest_node() const {
  Resources largest;
  for (const auto& node : nodes_) {
    if (node.capacity.cores > largest.cores) largest = node.capacity;
  }
  return largest;
}

}  // namespace chorus
