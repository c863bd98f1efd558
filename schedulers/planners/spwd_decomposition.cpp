#include "schedulers/planners/spwd_decomposition.hpp"

#include <algorithm>
#include <string>

namespace chorus {
namespace {

constexpr std::size_t npos = SpNode::npos;

std::vector<std::pair<std::size_t, std::size_t>> subtree_edges(const SpTree& tree,
                                                               const SpGraph& graph,
                                                               std::size_t node) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::vector<std::size_t> stack{node};
  while (!stack.empty()) {
    const SpNode& n = tree.nodes[stack.back()];
    stack.pop_back();
    if (n.kind == SpNodeKind::leaf) {
      out.push_back(graph.edges[n.edge]);
    } else {
      stack.push_back(n.left);
      stack.push_back(n.right);
    }
  }
  return out;
}

}  // namespace

Result<SpwdDecomposition> decompose_spwd(const SpGraph& graph, const SpTree& tree,
                                         const std::vector<double>& w, double deadline,
                                         std::size_t max_size) {
  if (max_size < 2) {
    return invalid_argument("the maximum subgraph size must be at least 2 (got " +
                            std::to_string(max_size) + ")");
  }
  SpwdDecomposition out;
  out.sp_vertices = graph.vertex_count;
  out.original.resize(graph.vertex_count);
  for (std::size_t v = 0; v < graph.vertex_count; ++v) out.original[v] = v;

  // A subtree's weight once its source may have been replaced by a zero-weight substitute.
  auto weight_of = [&](std::size_t node, std::size_t sub) {
    const SpNode& n = tree.nodes[node];
    return sub == npos ? n.weight : n.weight - w[n.source];
  };
  struct Item {
    std::size_t node;
    double deadline;
    std::size_t sub;  // substitute standing for the node's source, or npos
    std::size_t frame;
  };
  out.frames.emplace_back();
  std::vector<Item> stack{{tree.root, deadline, npos, 0}};
  auto child_frames = [&](std::size_t parent, SpNodeKind kind) {
    const std::size_t l = out.frames.size();
    out.frames.resize(l + 2);
    out.frames[parent].kind = kind;
    out.frames[parent].left = l;
    out.frames[parent].right = l + 1;
    return l;
  };
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const SpNode& n = tree.nodes[it.node];
    if (n.vertex_count <= max_size) {
      Subworkflow piece;
      piece.tree_node = it.node;
      piece.weight = weight_of(it.node, it.sub);
      piece.deadline = it.deadline;
      auto map = [&](std::size_t v) { return it.sub != npos && v == n.source ? it.sub : v; };
      for (std::size_t v : subtree_vertices(tree, graph, it.node)) piece.vertices.push_back(map(v));
      for (auto [u, v] : subtree_edges(tree, graph, it.node))
        piece.edges.emplace_back(map(u), map(v));
      std::sort(piece.vertices.begin(), piece.vertices.end());
      out.frames[it.frame].piece = out.pieces.size();
      out.pieces.push_back(std::move(piece));
      continue;
    }
    if (n.kind == SpNodeKind::parallel) {
      const std::size_t f = child_frames(it.frame, SpNodeKind::parallel);
      stack.push_back({n.right, it.deadline, it.sub, f + 1});
      stack.push_back({n.left, it.deadline, it.sub, f});
      continue;
    }
    // Series (a leaf has 2 vertices and never gets here).
    std::size_t right_sub = npos;
    if (w[n.joint] > 0) {
      right_sub = out.original.size();
      out.original.push_back(n.joint);
    }
    const double wl = weight_of(n.left, it.sub);
    const double wr = weight_of(n.right, right_sub);
    const double total = wl + wr;
    const double dl = total > 0 ? it.deadline * wl / total : it.deadline / 2;
    const double dr = total > 0 ? it.deadline * wr / total : it.deadline / 2;
    const std::size_t f = child_frames(it.frame, SpNodeKind::series);
    stack.push_back({n.right, dr, right_sub, f + 1});
    stack.push_back({n.left, dl, it.sub, f});
  }
  return out;
}

}  // namespace chorus
