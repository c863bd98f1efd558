// Two-terminal series-parallel (TTSP) graphs and SP-ization: turning any DAG into a TTSP graph
// whose every path order includes the DAG's (SPWD step 1).
//
// Method (docs/spwd.md has the details and the reasons):
//  1. Add a synthetic source before several roots and a synthetic sink after several leaves. If
//     that graph is already TTSP (checked with decompose_sp), it is used unchanged.
//  2. Otherwise the task set is split recursively. A set whose induced graph falls into several
//     weakly connected pieces is their parallel composition; a connected set is cut into a
//     prefix A and suffix B along an ASAP or ALAP level (every edge crosses from A to B), and
//     becomes the series composition A ; B. Among all level cuts the one with the smallest
//     longest-path(A) + longest-path(B) (vertex weights) wins, then the one crossing the fewest
//     edges. Synthetic vertices join the parts: a fork/join pair around a parallel composition
//     and a sync vertex between two consecutive parallel parts (a task next to a parallel part
//     serves as its fork or join).
// This is a level-based relative of González-Escribano, van Gemund and Cardeñoso-Payo's
// SP-ization: like theirs it only adds dependencies (never drops one), so a schedule valid for the
// TTSP graph is valid for the DAG, and a path deadline met there is met on the DAG.
#pragma once

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace chorus {

inline constexpr std::size_t kSyntheticVertex = std::numeric_limits<std::size_t>::max();

struct SpGraph {
  std::size_t vertex_count = 0;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::size_t source = 0;
  std::size_t sink = 0;
  std::vector<std::size_t> task;  // per vertex: the DAG vertex it stands for, or kSyntheticVertex

  std::size_t synthetic_count() const;
};

// Step 1 only: the DAG with synthetic terminals where needed (vertex i = DAG vertex i).
SpGraph two_terminal(const std::vector<std::vector<std::size_t>>& preds);

// A TTSP graph containing every DAG vertex, with every DAG edge u -> v kept as a path u ~> v.
// `weight` (per DAG vertex) guides the choice of cuts.
SpGraph spize(const std::vector<std::vector<std::size_t>>& preds,
              const std::vector<double>& weight);

}  // namespace chorus
