// SPWD steps 4 and 5 on a weighted decomposition tree.
//
// Step 4, pruning: walking down from the root, the first subtree with at most `max_size` vertices
// becomes a subworkflow (a leaf, two vertices, always qualifies). Above that frontier, a series
// node whose joint vertex v has positive weight is split: v stays with the left part and the
// right part starts at a zero-weight substitute of v, so no two pieces share v's work; the right
// part's weight drops by w(v).
// Step 5, deadlines, top-down from D at the root: the children of a series node get
// D * w(child) / (w(left) + w(right)) (weights after splitting), the children of a parallel node
// get D each.
// Every root-to-sink path of the TTSP graph then crosses pieces whose deadlines add up to at
// most D, so pieces that each meet their deadline meet D together.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "schedulers/planners/sp_graph.hpp"
#include "schedulers/planners/sp_tree.hpp"

namespace chorus {

struct Subworkflow {
  std::size_t tree_node = 0;
  // Vertex ids: SpGraph vertices, then substitutes (id >= SpGraph::vertex_count).
  std::vector<std::size_t> vertices;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  double weight = 0;
  double deadline = 0;
};

// The tree above the pruning frontier (what step 5 distributes the deadline over): a frame is a
// piece (kind leaf) or a series / parallel node over two frames. A series frame's parts add up
// (its joint's work lies in the left part only), a parallel frame's parts run side by side.
struct SpwdFrame {
  static constexpr std::size_t npos = SpNode::npos;
  SpNodeKind kind = SpNodeKind::leaf;
  std::size_t left = npos;  // frame indices; series: left runs first
  std::size_t right = npos;
  std::size_t piece = npos;  // leaf: index into SpwdDecomposition::pieces
};

struct SpwdDecomposition {
  std::vector<Subworkflow> pieces;
  std::vector<SpwdFrame> frames;  // frames[0] is the root
  // Per vertex id (SpGraph vertices, then substitutes): the SpGraph vertex it stands for.
  std::vector<std::size_t> original;
  std::size_t sp_vertices = 0;
  std::size_t substitutes() const { return original.size() - sp_vertices; }
  bool is_substitute(std::size_t v) const { return v >= sp_vertices; }
};

// `tree` must carry weights from assign_weights(tree, graph, vertex_weight). max_size >= 2.
Result<SpwdDecomposition> decompose_spwd(const SpGraph& graph, const SpTree& tree,
                                         const std::vector<double>& vertex_weight, double deadline,
                                         std::size_t max_size);

}  // namespace chorus
