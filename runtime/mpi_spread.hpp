// Placing one MPI task across several nodes: how many of its ranks go where.
//
// The placement policy chooses one node per task; an MPI task larger than any node's free room
// (or one asking for `nodes: N`) is spread instead. The policy still has its say: a node it
// filters out for one rank (a lost agent's node, a planned node elsewhere) gets no rank.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/task_spec.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

struct RankShare {
  int node = 0;  // index into the views
  int ranks = 0;

  bool operator==(const RankShare&) const = default;
};

struct MpiSpread {
  Fit fit = Fit::never;
  std::vector<RankShare> shares;  // Fit::now: in rank order, summing to spec.ranks
  std::string why;                // Fit::never: what the task needs and what the nodes have
};

// Whether `spec` (kind mpi, nodes != 1) can be spread over `views` now, later (when running work
// ends) or never. nodes == 0: as few nodes as fit, fullest shares first; nodes == N: exactly N
// nodes with the block distribution (the first ranks % N nodes get one rank more), as srun -N N.
// `probe` is scratch space (a copy of spec with one rank, asked of the placement policy).
MpiSpread spread_mpi_task(const TaskSpec& spec, std::span<const NodeView> views,
                          const PlacementPolicy& placement, TaskSpec& probe);

// The journal's node field of a spread attempt: "n1:8,n2:4" (cores held on each node).
std::string spread_node_field(const std::vector<RankShare>& shares, std::span<const NodeView> views,
                              const TaskSpec& spec);

}  // namespace chorus
