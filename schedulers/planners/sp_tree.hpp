// The binary decomposition tree of a TTSP graph (SPWD steps 2 and 3), built by the Valdes,
// Tarjan and Lawler reductions: parallel edges merge into a P node, a vertex with one incoming and
// one outgoing edge merges them into an S node (that vertex is the S node's joint). A leaf is an
// edge. The graph is TTSP exactly when the reductions end in one source -> sink edge.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.hpp"
#include "schedulers/planners/sp_graph.hpp"

namespace chorus {

enum class SpNodeKind : std::uint8_t { leaf, series, parallel };

struct SpNode {
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  SpNodeKind kind = SpNodeKind::leaf;
  std::size_t left = npos;  // series: the part ending at joint; parallel: either branch
  std::size_t right = npos;
  std::size_t source = 0;  // the subgraph's terminals
  std::size_t sink = 0;
  std::size_t joint = npos;  // series only: the vertex the two parts share
  std::size_t edge = npos;   // leaf only: index into SpGraph::edges
  std::size_t vertex_count = 0;
  double weight = 0;  // step 3
};

struct SpTree {
  std::vector<SpNode> nodes;  // children always precede their parent
  std::size_t root = SpNode::npos;
};

// invalid_argument "not two-terminal series-parallel: ..." when the reductions get stuck.
Result<SpTree> decompose_sp(const SpGraph& graph);

bool is_series_parallel(const SpGraph& graph);

// Step 3, bottom-up: leaf = w(u) + w(v); series = w(L) + w(R) - w(joint); parallel = max.
// `vertex_weight` is per SpGraph vertex.
void assign_weights(SpTree& tree, const SpGraph& graph, const std::vector<double>& vertex_weight);

// The SpGraph vertices of a subtree (sorted).
std::vector<std::size_t> subtree_vertices(const SpTree& tree, const SpGraph& graph,
                                          std::size_t node);

}  // namespace chorus
