// The cluster as placement sees it: the nodes, and per node what is free and how many tasks run
// there (as the NodeViews every placement policy reads). The live coordinator and the simulator
// keep one each; PlacementStep decides where a task goes, reserve() and release() book it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/task_spec.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

// Ranks of one MPI task spread over several nodes: `ranks` of them on node `node`.
struct RankShare {
  int node = 0;  // index into the cluster's nodes
  int ranks = 0;

  bool operator==(const RankShare&) const = default;
};

// Where one task goes.
struct Placement {
  Fit fit = Fit::never;
  int node = -1;                  // Fit::now: the node (for a spread task, its first share's)
  std::vector<RankShare> shares;  // Fit::now and spread over nodes: in rank order; else empty
  std::string why;                // Fit::never: what the task needs and what the nodes have
  // Fit::later although a node fits now: the policy would rather wait for a busy node
  // (PlacementPolicy::waits_for_better). The task is not failed when only services run.
  bool waiting_for_better = false;
};

// Free and running per node. Views point into the state's own nodes and facts: a copy rebinds
// them. The node count is fixed for the state's life, so the views never move.
class ClusterState {
 public:
  explicit ClusterState(std::vector<NodeInfo> nodes);
  ClusterState(const ClusterState& other);
  ClusterState& operator=(const ClusterState& other);
  ClusterState(ClusterState&&) noexcept = default;
  ClusterState& operator=(ClusterState&&) noexcept = default;

  std::span<const NodeView> views() const { return views_; }
  const NodeView& view(int index) const { return views_[static_cast<std::size_t>(index)]; }
  const NodeInfo& node(int index) const { return nodes_[static_cast<std::size_t>(index)]; }
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  std::size_t size() const { return nodes_.size(); }

  // Books `task` where `where` (fit == Fit::now) puts it: its total on one node, or each share's
  // ranks on that share's node; each node it touches runs one more task.
  void reserve(const TaskSpec& task, const Placement& where);
  // Undoes that reserve (the same task and placement).
  void release(const TaskSpec& task, const Placement& where);

  // The node with the most cores (the first of equals); a state with no nodes has none (0s).
  Resources largest_node() const;

  // A node's facts beyond capacity and load (node_facts.hpp), as its view's `facts` shows them.
  // The owner writes them between placement decisions; policies read them through the views.
  NodeFacts& facts(int index) { return facts_[static_cast<std::size_t>(index)]; }
  const NodeFacts& facts(int index) const { return facts_[static_cast<std::size_t>(index)]; }
  std::span<NodeFacts> all_facts() { return facts_; }

 private:
  void bind_views();

  std::vector<NodeInfo> nodes_;
  std::vector<NodeFacts> facts_;
  std::vector<NodeView> views_;
};

}  // namespace chorus
