#include "schedulers/planners/sp_tree.hpp"

#include <algorithm>
#include <string>

namespace chorus {
namespace {

struct LiveEdge {
  std::size_t u;
  std::size_t v;
  std::size_t node;  // tree node the edge stands for
  bool alive;
};

class Reducer {
 public:
  explicit Reducer(const SpGraph& g) : g_(g), out_(g.vertex_count), in_(g.vertex_count) {}

  Result<SpTree> run() {
    if (g_.vertex_count < 2 || g_.source >= g_.vertex_count || g_.sink >= g_.vertex_count ||
        g_.source == g_.sink) {
      return fail("needs distinct source and sink vertices");
    }
    for (std::size_t i = 0; i < g_.edges.size(); ++i) {
      const auto [u, v] = g_.edges[i];
      if (u >= g_.vertex_count || v >= g_.vertex_count || u == v) return fail("bad edge");
      SpNode leaf;
      leaf.kind = SpNodeKind::leaf;
      leaf.source = u;
      leaf.sink = v;
      leaf.edge = i;
      leaf.vertex_count = 2;
      add_edge(u, v, push(leaf));
    }
    std::vector<std::size_t> work;
    for (std::size_t v = 0; v < g_.vertex_count; ++v) work.push_back(v);
    while (!work.empty()) {
      const std::size_t v = work.back();
      work.pop_back();
      if (v == g_.source || v == g_.sink) continue;
      const auto ins = alive(in_[v]);
      const auto outs = alive(out_[v]);
      if (ins.size() != 1 || outs.size() != 1) continue;
      LiveEdge& a = edges_[ins[0]];
      LiveEdge& b = edges_[outs[0]];
      a.alive = b.alive = false;
      SpNode s;
      s.kind = SpNodeKind::series;
      s.left = a.node;
      s.right = b.node;
      s.source = a.u;
      s.sink = b.v;
      s.joint = v;
      s.vertex_count = tree_.nodes[a.node].vertex_count + tree_.nodes[b.node].vertex_count - 1;
      const std::size_t u = a.u;
      const std::size_t w = b.v;
      add_edge(u, w, push(s));
      work.push_back(u);
      work.push_back(w);
    }
    std::vector<std::size_t> left;
    for (std::size_t i = 0; i < edges_.size(); ++i) {
      if (edges_[i].alive) left.push_back(i);
    }
    if (left.size() != 1 || edges_[left[0]].u != g_.source || edges_[left[0]].v != g_.sink) {
      return fail(std::to_string(left.size()) + " edges remain after series and parallel " +
                  "reductions (a subgraph shaped like the bridge a->b, a->c, b->c, b->d, c->d " +
                  "blocks them)");
    }
    tree_.root = edges_[left[0]].node;
    return std::move(tree_);
  }

 private:
  static Status fail(const std::string& why) {
    return invalid_argument("not two-terminal series-parallel: " + why);
  }

  std::size_t push(const SpNode& n) {
    tree_.nodes.push_back(n);
    return tree_.nodes.size() - 1;
  }

  std::vector<std::size_t> alive(std::vector<std::size_t>& list) {
    list.erase(
        std::remove_if(list.begin(), list.end(), [&](std::size_t e) { return !edges_[e].alive; }),
        list.end());
    return list;
  }

  // Adds u -> v, merging it into a P node with an existing u -> v edge.
  void add_edge(std::size_t u, std::size_t v, std::size_t node) {
    for (std::size_t e : out_[u]) {
      LiveEdge& other = edges_[e];
      if (other.alive && other.v == v) {
        SpNode p;
        p.kind = SpNodeKind::parallel;
        p.left = other.node;
        p.right = node;
        p.source = u;
        p.sink = v;
        p.vertex_count = tree_.nodes[other.node].vertex_count + tree_.nodes[node].vertex_count - 2;
        other.node = push(p);
        return;
      }
    }
    edges_.push_back({u, v, node, true});
    out_[u].push_back(edges_.size() - 1);
    in_[v].push_back(edges_.size() - 1);
  }

  const SpGraph& g_;
  std::vector<LiveEdge> edges_;
  std::vector<std::vector<std::size_t>> out_;
  std::vector<std::vector<std::size_t>> in_;
  SpTree tree_;
};

}  // namespace

Result<SpTree> decompose_sp(const SpGraph& graph) {
  return Reducer(graph).run();
}

bool is_series_parallel(const SpGraph& graph) {
  return decompose_sp(graph).ok();
}

void assign_weights(SpTree& tree, const SpGraph& graph, const std::vector<double>& w) {
  for (auto& n : tree.nodes) {
    switch (n.kind) {
      case SpNodeKind::leaf: {
        const auto [u, v] = graph.edges[n.edge];
        n.weight = w[u] + w[v];
        break;
      }
      case SpNodeKind::series:
        n.weight = tree.nodes[n.left].weight + tree.nodes[n.right].weight - w[n.joint];
        break;
      case SpNodeKind::parallel:
        n.weight = std::max(tree.nodes[n.left].weight, tree.nodes[n.right].weight);
        break;
    }
  }
}

std::vector<std::size_t> subtree_vertices(const SpTree& tree, const SpGraph& graph,
                                          std::size_t node) {
  std::vector<std::size_t> out;
  std::vector<std::size_t> stack{node};
  while (!stack.empty()) {
    const SpNode& n = tree.nodes[stack.back()];
    stack.pop_back();
    if (n.kind == SpNodeKind::leaf) {
      out.push_back(graph.edges[n.edge].first);
      out.push_back(graph.edges[n.edge].second);
    } else {
      stack.push_back(n.left);
      stack.push_back(n.right);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace chorus
