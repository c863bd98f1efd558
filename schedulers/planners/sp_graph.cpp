#include "schedulers/planners/sp_graph.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "schedulers/planners/sp_tree.hpp"

namespace chorus {
namespace {

constexpr std::size_t kNone = kSyntheticVertex;

// A node-level series-parallel expression over DAG vertices.
struct Expr {
  enum class Kind : std::uint8_t { task, series, parallel };
  Kind kind = Kind::task;
  std::size_t task = kNone;
  std::vector<std::size_t> children;  // indices into Spizer::exprs_
};

class Spizer {
 public:
  Spizer(const std::vector<std::vector<std::size_t>>& preds, const std::vector<double>& weight)
      : preds_(preds), weight_(weight), n_(preds.size()), succ_(n_), mark_(n_, 0), topo_pos_(n_) {
    std::vector<std::size_t> missing(n_);
    std::vector<std::size_t> order;
    for (std::size_t v = 0; v < n_; ++v) {
      for (std::size_t p : preds_[v]) succ_[p].push_back(v);
      missing[v] = preds_[v].size();
      if (missing[v] == 0) order.push_back(v);
    }
    for (std::size_t head = 0; head < order.size(); ++head) {
      for (std::size_t s : succ_[order[head]]) {
        if (--missing[s] == 0) order.push_back(s);
      }
    }
    for (std::size_t i = 0; i < order.size(); ++i) topo_pos_[order[i]] = i;
  }

  SpGraph run() {
    std::vector<std::size_t> all(n_);
    for (std::size_t v = 0; v < n_; ++v) all[v] = v;
    const std::size_t root = build(std::move(all));
    out_.vertex_count = n_;
    out_.task.resize(n_);
    for (std::size_t v = 0; v < n_; ++v) out_.task[v] = v;
    std::size_t src = kNone;
    std::size_t snk = kNone;
    if (exprs_[root].kind == Expr::Kind::task) {
      // A single task: a TTSP graph needs an edge, so a synthetic sink follows it.
      src = exprs_[root].task;
      snk = synthetic();
      edge(src, snk);
    } else {
      std::tie(src, snk) = convert(root, kNone, kNone);
    }
    out_.source = src;
    out_.sink = snk;
    return std::move(out_);
  }

 private:
  std::size_t make(Expr e) {
    exprs_.push_back(std::move(e));
    return exprs_.size() - 1;
  }

  // Appends child to a series/parallel expression, inlining a child of the same kind.
  void append(Expr& parent, std::size_t child) {
    if (exprs_[child].kind == parent.kind) {
      const auto grandchildren = exprs_[child].children;
      parent.children.insert(parent.children.end(), grandchildren.begin(), grandchildren.end());
    } else {
      parent.children.push_back(child);
    }
  }

  std::size_t build(std::vector<std::size_t> set) {
    if (set.size() == 1) return make({Expr::Kind::task, set[0], {}});
    const unsigned stamp = ++stamp_;
    for (std::size_t v : set) mark_[v] = stamp;
    auto inside = [&](std::size_t v) { return mark_[v] == stamp; };

    // Weakly connected components of the induced subgraph.
    std::vector<std::vector<std::size_t>> comps;
    {
      const unsigned seen = ++stamp_;
      for (std::size_t start : set) {
        if (mark_[start] == seen) continue;
        comps.emplace_back();
        std::vector<std::size_t> stack{start};
        mark_[start] = seen;
        while (!stack.empty()) {
          const std::size_t v = stack.back();
          stack.pop_back();
          comps.back().push_back(v);
          auto visit = [&](std::size_t w) {
            if (mark_[w] == stamp) {
              mark_[w] = seen;
              stack.push_back(w);
            }
          };
          for (std::size_t p : preds_[v]) visit(p);
          for (std::size_t s : succ_[v]) visit(s);
        }
      }
      // Every vertex of the set now carries `seen`: restore the set's own stamp.
      for (std::size_t v : set) mark_[v] = stamp;
    }
    if (comps.size() > 1) {
      Expr par{Expr::Kind::parallel, kNone, {}};
      std::vector<std::size_t> kids;
      for (auto& c : comps) kids.push_back(build(std::move(c)));
      for (std::size_t k : kids) append(par, k);
      return make(std::move(par));
    }

    // Connected: cut along a level. Work in topological order.
    std::sort(set.begin(), set.end(),
              [&](std::size_t a, std::size_t b) { return topo_pos_[a] < topo_pos_[b]; });
    for (std::size_t v : set) mark_[v] = stamp;
    const std::size_t m = set.size();
    std::vector<std::size_t> asap(m, 0), alap(m, 0);
    std::vector<double> down(m, 0.0), up(m, 0.0);
    local_.resize(std::max(local_.size(), n_));
    for (std::size_t i = 0; i < m; ++i) local_[set[i]] = i;
    std::size_t depth = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t v = set[i];
      double best = 0;
      for (std::size_t p : preds_[v]) {
        if (!inside(p)) continue;
        asap[i] = std::max(asap[i], asap[local_[p]] + 1);
        best = std::max(best, down[local_[p]]);
      }
      down[i] = best + weight_[v];
      depth = std::max(depth, asap[i]);
    }
    std::vector<std::size_t> height(m, 0);  // longest path to a sink, in edges
    for (std::size_t i = m; i-- > 0;) {
      const std::size_t v = set[i];
      double best = 0;
      for (std::size_t s : succ_[v]) {
        if (!inside(s)) continue;
        height[i] = std::max(height[i], height[local_[s]] + 1);
        best = std::max(best, up[local_[s]]);
      }
      up[i] = best + weight_[v];
    }
    for (std::size_t i = 0; i < m; ++i) alap[i] = depth - height[i];

    // For each family of levels and each cut k (A = level <= k), score the cut.
    struct Cut {
      double length;
      std::size_t crossing;
      bool use_alap;
      std::size_t k;
    };
    Cut best{0, 0, false, 0};
    bool have = false;
    for (bool use_alap : {false, true}) {
      const auto& level = use_alap ? alap : asap;
      std::vector<double> a_max(depth + 1, 0.0), b_max(depth + 2, 0.0);
      std::vector<long long> cross(depth + 2, 0);
      for (std::size_t i = 0; i < m; ++i) {
        a_max[level[i]] = std::max(a_max[level[i]], down[i]);
        b_max[level[i]] = std::max(b_max[level[i]], up[i]);
        for (std::size_t s : succ_[set[i]]) {
          if (!inside(s)) continue;
          // The edge crosses cuts k with level[i] <= k < level[s].
          ++cross[level[i]];
          --cross[level[local_[s]]];
        }
      }
      for (std::size_t k = 1; k <= depth; ++k) a_max[k] = std::max(a_max[k], a_max[k - 1]);
      for (std::size_t k = depth; k-- > 0;) b_max[k] = std::max(b_max[k], b_max[k + 1]);
      long long running = 0;
      for (std::size_t k = 0; k < depth; ++k) {
        running += cross[k];
        const Cut c{a_max[k] + b_max[k + 1], static_cast<std::size_t>(running), use_alap, k};
        const double eps = 1e-9 * std::max(1.0, c.length);
        if (!have || c.length < best.length - eps ||
            (c.length <= best.length + eps && c.crossing < best.crossing)) {
          best = c;
          have = true;
        }
      }
    }
    std::vector<std::size_t> a, b;
    const auto& level = best.use_alap ? alap : asap;
    for (std::size_t i = 0; i < m; ++i) (level[i] <= best.k ? a : b).push_back(set[i]);
    const std::size_t ea = build(std::move(a));
    const std::size_t eb = build(std::move(b));
    Expr ser{Expr::Kind::series, kNone, {}};
    append(ser, ea);
    append(ser, eb);
    return make(std::move(ser));
  }

  std::size_t synthetic() {
    out_.task.push_back(kSyntheticVertex);
    return n_ + synthetic_count_++;
  }

  void edge(std::size_t u, std::size_t v) { out_.edges.emplace_back(u, v); }

  // Lays expression e out between terminals `in` and `out` (kNone = e's own first/last vertex);
  // returns the terminals actually used.
  std::pair<std::size_t, std::size_t> convert(std::size_t ei, std::size_t in, std::size_t out) {
    const Expr e = exprs_[ei];
    switch (e.kind) {
      case Expr::Kind::task:
        if (in != kNone) edge(in, e.task);
        if (out != kNone) edge(e.task, out);
        return {in != kNone ? in : e.task, out != kNone ? out : e.task};
      case Expr::Kind::parallel:
        if (in == kNone) in = synthetic();
        if (out == kNone) out = synthetic();
        for (std::size_t c : e.children) convert(c, in, out);
        return {in, out};
      case Expr::Kind::series:
        break;
    }
    std::size_t first = kNone;
    std::size_t cur = in;
    bool cur_is_task = false;
    for (std::size_t i = 0; i < e.children.size(); ++i) {
      const Expr& c = exprs_[e.children[i]];
      if (c.kind == Expr::Kind::task) {
        if (cur != kNone) edge(cur, c.task);
        if (first == kNone) first = cur != kNone ? cur : c.task;
        cur = c.task;
        cur_is_task = true;
        continue;
      }
      // A parallel part: its join is the next task if one follows, else `out` at the end, else
      // a synthetic sync vertex.
      std::size_t next = kNone;
      bool joins_task = false;
      if (i + 1 < e.children.size() && exprs_[e.children[i + 1]].kind == Expr::Kind::task) {
        next = exprs_[e.children[i + 1]].task;
        joins_task = true;
      } else if (i + 1 == e.children.size()) {
        next = out;
      } else {
        next = synthetic();
      }
      const auto [s, t] = convert(e.children[i], cur, next);
      if (first == kNone) first = s;
      cur = t;
      cur_is_task = false;
      if (joins_task) {
        ++i;  // the following task is already wired in as the join
        cur_is_task = true;
      }
    }
    if (cur_is_task && out != kNone) {
      edge(cur, out);
      cur = out;
    } else if (!cur_is_task && out != kNone) {
      cur = out;
    }
    return {first, cur};
  }

  const std::vector<std::vector<std::size_t>>& preds_;
  const std::vector<double>& weight_;
  std::size_t n_;
  std::vector<std::vector<std::size_t>> succ_;
  std::vector<unsigned> mark_;
  std::vector<std::size_t> topo_pos_;
  std::vector<std::size_t> local_;
  unsigned stamp_ = 0;
  std::vector<Expr> exprs_;
  SpGraph out_;
  std::size_t synthetic_count_ = 0;
};

}  // namespace

std::size_t SpGraph::synthetic_count() const {
  return static_cast<std::size_t>(std::count(task.begin(), task.end(), kSyntheticVertex));
}

SpGraph two_terminal(const std::vector<std::vector<std::size_t>>& preds) {
  const std::size_t n = preds.size();
  SpGraph g;
  g.vertex_count = n;
  g.task.resize(n);
  std::vector<char> has_succ(n, 0);
  std::vector<std::size_t> roots, leaves;
  for (std::size_t v = 0; v < n; ++v) {
    g.task[v] = v;
    for (std::size_t p : preds[v]) {
      g.edges.emplace_back(p, v);
      has_succ[p] = 1;
    }
    if (preds[v].empty()) roots.push_back(v);
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (!has_succ[v]) leaves.push_back(v);
  }
  auto synthetic = [&] {
    g.task.push_back(kSyntheticVertex);
    return g.vertex_count++;
  };
  if (roots.size() == 1 && n > 1) {
    g.source = roots[0];
  } else {
    g.source = synthetic();
    for (std::size_t r : roots) g.edges.emplace_back(g.source, r);
  }
  if (leaves.size() == 1 && n > 1) {
    g.sink = leaves[0];
  } else {
    g.sink = synthetic();
    for (std::size_t l : leaves) g.edges.emplace_back(l, g.sink);
  }
  return g;
}

SpGraph spize(const std::vector<std::vector<std::size_t>>& preds,
              const std::vector<double>& weight) {
  SpGraph direct = two_terminal(preds);
  if (is_series_parallel(direct)) return direct;
  SpGraph g = Spizer(preds, weight).run();
  g.vertex_count = g.task.size();
  return g;
}

}  // namespace chorus
