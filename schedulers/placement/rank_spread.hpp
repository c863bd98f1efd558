// The rank arithmetic of spreading one MPI task over several nodes, shared by PlacementStep and
// the workflow loader's "can this ever run" checks (workflows/graph_builder.cpp), so both count
// ranks the same way.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/resources.hpp"
#include "core/task_spec.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

// How many ranks of size `per_rank` fit in `room`, at most `cap` (never below 0). A resource the
// rank does not ask for does not limit it.
int ranks_fitting(const Resources& per_rank, const Resources& room, int cap);

// The block distribution of `ranks` ranks over `nodes` nodes (as srun -N): how many go to the
// j-th node (0-based); the first ranks % nodes nodes get one rank more.
inline int block_ranks(int ranks, int nodes, int j) {
  return ranks / nodes + (j < ranks % nodes ? 1 : 0);
}

// A node the policy accepts one rank on, with how many ranks fit there.
struct RankCandidate {
  int node;
  int fits;  // ranks
};

// Whether `spec` (kind mpi, nodes != 1) can be spread over `views` now, later (when running work
// ends) or never. nodes == 0: as few nodes as fit, fullest shares first; nodes == N: exactly N
// nodes with the block distribution. A node the policy filters out for one rank gets no rank.
// `probe`, `now` and `someday` are scratch (kept by the caller so repeated calls reuse them);
// `why` is set for Fit::never only (without the "can never run on these nodes: " head).
Fit spread_ranks(const TaskSpec& spec, std::span<const NodeView> views,
                 const PlacementPolicy& placement, std::vector<RankShare>& shares, std::string& why,
                 TaskSpec& probe, std::vector<RankCandidate>& now,
                 std::vector<RankCandidate>& someday);

}  // namespace chorus
