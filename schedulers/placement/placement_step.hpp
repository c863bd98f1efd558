// One placement decision: where a task goes in a cluster, under a placement policy. The live
// coordinator, the simulator and the loader's fit checks share it, so what the simulator measures
// is what production runs.
#pragma once

#include <string>
#include <vector>

#include "core/task_spec.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/rank_spread.hpp"
#include "schedulers/placement_explanation.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

class PlacementStep {
 public:
  explicit PlacementStep(const PlacementPolicy& policy) : policy_(policy) {}

  // Now (on a node, or as rank shares over nodes for an MPI task with nodes != 1 or too big for
  // one node), later (fits once running work ends), or never (with why). Reads the state only;
  // keeps scratch of its own so the hot single-node path allocates nothing.
  //
  // One node: the policy filters every node; among those that fit now the highest score wins,
  // ties to the first node; later when no node fits now and one said later. Never's why: "can
  // never run here: needs X, the largest node has Y". A spread (kind mpi and nodes > 1, or
  // nodes == 0 and no single node fits now) follows spread_ranks; its never's why is "can never
  // run on these nodes: " and what spread_ranks says.
  //
  // A policy with batch_scores() gets every node that fits now in one score_all() call at `now`
  // (same rule: highest wins, ties to the first); one that explains then fills explanation().
  // The two-argument form decides at the epoch (a policy that reads the time treats every
  // snapshot as fresh).
  Placement place(const TaskSpec& task, const ClusterState& cluster, TimePoint now);
  Placement place(const TaskSpec& task, const ClusterState& cluster) {
    return place(task, cluster, TimePoint{});
  }

  // Why the last place() chose its node, when the policy explained it (else null). Valid until
  // the next place().
  const PlacementExplanation* explanation() const { return explained_ ? &explanation_ : nullptr; }

  const PlacementPolicy& policy() const { return policy_; }

 private:
  const PlacementPolicy& policy_;
  TaskSpec probe_;
  std::vector<RankCandidate> now_, someday_;
  // Batch scoring scratch, grown to the node count once.
  std::vector<const NodeView*> fitting_;
  std::vector<const NodeView*> busy_;  // fit later: what waits_for_better may prefer
  std::vector<double> scores_;
  PlacementExplanation explanation_;
  bool explained_ = false;
};

}  // namespace chorus
