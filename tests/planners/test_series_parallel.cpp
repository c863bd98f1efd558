#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "schedulers/planners/plan_evaluation.hpp"
#include "schedulers/planners/sp_graph.hpp"
#include "schedulers/planners/sp_tree.hpp"
#include "schedulers/planners/spwd_decomposition.hpp"
#include "workflows/wfcommons_reader.hpp"

using namespace chorus;

namespace {

SpGraph graph_of(std::size_t n, std::vector<std::pair<std::size_t, std::size_t>> edges,
                 std::size_t source, std::size_t sink) {
  SpGraph g;
  g.vertex_count = n;
  g.edges = std::move(edges);
  g.source = source;
  g.sink = sink;
  g.task.resize(n);
  for (std::size_t v = 0; v < n; ++v) g.task[v] = v;
  return g;
}

// a=0 -> b=1, a -> c=2, b -> d=3, c -> d, d -> e=4.
std::vector<std::vector<std::size_t>> diamond_tail() {
  return {{}, {0}, {0}, {1, 2}, {3}};
}

// Is v reachable from u in g?
bool reaches(const SpGraph& g, std::size_t u, std::size_t v) {
  std::vector<std::vector<std::size_t>> succ(g.vertex_count);
  for (auto [a, b] : g.edges) succ[a].push_back(b);
  std::vector<char> seen(g.vertex_count, 0);
  std::vector<std::size_t> stack{u};
  while (!stack.empty()) {
    const auto x = stack.back();
    stack.pop_back();
    if (x == v) return true;
    for (auto y : succ[x]) {
      if (!seen[y]) {
        seen[y] = 1;
        stack.push_back(y);
      }
    }
  }
  return false;
}

void check_spization(const std::vector<std::vector<std::size_t>>& preds) {
  const SpGraph g = spize(preds, std::vector<double>(preds.size(), 1.0));
  REQUIRE(is_series_parallel(g));
  REQUIRE(g.task.size() == g.vertex_count);
  for (std::size_t v = 0; v < preds.size(); ++v) {
    CHECK(g.task[v] == v);
    for (std::size_t p : preds[v]) CHECK(reaches(g, p, v));
  }
  // Only synthetic vertices are added.
  for (std::size_t v = preds.size(); v < g.vertex_count; ++v) CHECK(g.task[v] == kSyntheticVertex);
}

}  // namespace

TEST_CASE("Planners.SeriesParallel.RecognisesSpGraphs") {
  // A single edge, a chain, parallel edges, a diamond with a tail, nested compositions.
  CHECK(is_series_parallel(graph_of(2, {{0, 1}}, 0, 1)));
  CHECK(is_series_parallel(graph_of(4, {{0, 1}, {1, 2}, {2, 3}}, 0, 3)));
  CHECK(is_series_parallel(graph_of(2, {{0, 1}, {0, 1}, {0, 1}}, 0, 1)));
  CHECK(is_series_parallel(graph_of(5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}}, 0, 4)));
  CHECK(is_series_parallel(
      graph_of(6, {{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}, {0, 4}, {4, 5}, {0, 5}}, 0, 5)));
}

TEST_CASE("Planners.SeriesParallel.RejectsNonSpGraphs") {
  // The Wheatstone bridge s->a, s->b, a->b, a->t, b->t: the smallest non-SP DAG.
  auto bridge = decompose_sp(graph_of(4, {{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}}, 0, 3));
  REQUIRE_FALSE(bridge.ok());
  CHECK(bridge.status().message().find("not two-terminal series-parallel") != std::string::npos);
  // The N shape a->c, b->c, b->d once terminals are added.
  CHECK_FALSE(is_series_parallel(two_terminal({{}, {}, {0, 1}, {1}})));
  // Wrong terminals: a sink that is not the only sink.
  CHECK_FALSE(is_series_parallel(graph_of(3, {{0, 1}, {0, 2}}, 0, 2)));
}

TEST_CASE("Planners.SeriesParallel.SpizationKeepsSpGraphsAndOrdersNonSpOnes") {
  // Already SP (with one root and one leaf): returned unchanged, no synthetic vertex.
  const SpGraph same = spize(diamond_tail(), std::vector<double>(5, 1.0));
  CHECK(same.vertex_count == 5);
  CHECK(same.edges.size() == 5);
  // The N shape, a bridge with terminals, a complete bipartite K3,3, a ladder.
  check_spization({{}, {}, {0, 1}, {1}});
  check_spization({{}, {0}, {0, 1}, {1, 2}});
  check_spization({{}, {}, {}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}});
  check_spization({{}, {0}, {0}, {1, 2}, {1}, {3, 4}, {4}, {5, 6}});
  check_spization({{}});  // one task
}

TEST_CASE("Planners.SeriesParallel.SpizesEveryBundledInstance") {
  const std::string dir = std::string(CHORUS_SOURCE_DIR) + "/../shared/data/wfcommons/";
  for (const char* f :
       {"srasearch-chameleon-10a-001.json", "blast-chameleon-small-001.json",
        "cycles-chameleon-1l-1c-9p-001.json", "seismology-chameleon-100p-001.json",
        "montage-chameleon-2mass-015d-001.json", "1000genome-chameleon-22ch-250k-001.json",
        "epigenomics-chameleon-ilmn-5seq-50k-001.json"}) {
    CAPTURE(f);
    auto inst = read_wfcommons_file(dir + f);
    REQUIRE(inst.ok());
    std::vector<std::vector<std::size_t>> preds;
    for (const auto& t : inst->graph.tasks) preds.emplace_back(t.after.begin(), t.after.end());
    check_spization(preds);
  }
}

TEST_CASE("Planners.SeriesParallel.TreeAndWeightsOfAHandCheckedExample") {
  // a(1) -> b(2), a -> c(4), b -> d(3), c -> d, d -> e(5).
  const SpGraph g = two_terminal(diamond_tail());
  REQUIRE(g.source == 0);
  REQUIRE(g.sink == 4);
  auto tree = decompose_sp(g);
  REQUIRE(tree.ok());
  const std::vector<double> w{1, 2, 4, 3, 5};
  assign_weights(*tree, g, w);
  const SpNode& root = tree->nodes[tree->root];
  // root = S(P(S(ab, bd; b), S(ac, cd; c)), de; d)
  REQUIRE(root.kind == SpNodeKind::series);
  CHECK(root.joint == 3);
  CHECK(root.vertex_count == 5);
  CHECK(root.weight == doctest::Approx(13));  // a + c + d + e: the heavier branch
  const SpNode& p = tree->nodes[root.left];
  const SpNode& tail = tree->nodes[root.right];
  REQUIRE(p.kind == SpNodeKind::parallel);
  CHECK(p.vertex_count == 4);
  CHECK(p.weight == doctest::Approx(8));
  REQUIRE(tail.kind == SpNodeKind::leaf);
  CHECK(tail.weight == doctest::Approx(8));  // d + e
  std::multiset<double> branch{tree->nodes[p.left].weight, tree->nodes[p.right].weight};
  CHECK(branch == std::multiset<double>{6, 8});  // a+b+d, a+c+d
  CHECK(tree->nodes[p.left].kind == SpNodeKind::series);
  CHECK(tree->nodes[p.left].vertex_count == 3);

  SUBCASE("pruned at 4 vertices: the diamond and a substituted tail") {
    auto dec = decompose_spwd(g, *tree, w, 26, 4);
    REQUIRE(dec.ok());
    REQUIRE(dec->pieces.size() == 2);
    REQUIRE(dec->substitutes() == 1);
    const std::size_t d_sub = 5;
    CHECK(dec->original[d_sub] == 3);
    CHECK(dec->pieces[0].vertices == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(dec->pieces[0].weight == doctest::Approx(8));
    CHECK(dec->pieces[0].deadline == doctest::Approx(16));  // 26 * 8 / 13
    CHECK(dec->pieces[1].vertices == std::vector<std::size_t>{4, d_sub});
    CHECK(dec->pieces[1].edges == std::vector<std::pair<std::size_t, std::size_t>>{{d_sub, 4}});
    CHECK(dec->pieces[1].weight == doctest::Approx(5));     // e only: d's work stays left
    CHECK(dec->pieces[1].deadline == doctest::Approx(10));  // 26 * 5 / 13
  }
  SUBCASE("pruned at 3 vertices: the parallel branches each keep the full share") {
    auto dec = decompose_spwd(g, *tree, w, 26, 3);
    REQUIRE(dec.ok());
    REQUIRE(dec->pieces.size() == 3);
    std::multiset<double> deadlines;
    for (const auto& piece : dec->pieces) {
      CHECK(piece.vertices.size() <= 3);
      deadlines.insert(piece.deadline);
    }
    CHECK(deadlines.count(16) == 2);
    CHECK(deadlines.count(10) == 1);
  }
  SUBCASE("the whole graph fits") {
    auto dec = decompose_spwd(g, *tree, w, 26, 5);
    REQUIRE(dec.ok());
    REQUIRE(dec->pieces.size() == 1);
    CHECK(dec->pieces[0].deadline == doctest::Approx(26));
    CHECK(dec->substitutes() == 0);
  }
  SUBCASE("too small a size is refused") {
    CHECK_FALSE(decompose_spwd(g, *tree, w, 26, 1).ok());
  }
}
