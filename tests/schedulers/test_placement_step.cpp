// One placement step (schedulers/placement/placement_step.hpp) over a ClusterState: one node now,
// later or never; MPI ranks spread over nodes; reserve and release of single nodes and shares.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/placement/placement_step.hpp"

namespace {

using chorus::ClusterState;
using chorus::Fit;
using chorus::Placement;
using chorus::PlacementStep;
using chorus::RankShare;
using chorus::TaskSpec;

std::vector<chorus::NodeInfo> nodes_of(int cores, std::size_t count, std::int64_t memory_mb = 0) {
  std::vector<chorus::NodeInfo> nodes;
  for (std::size_t i = 0; i < count; ++i) {
    nodes.push_back({"n" + std::to_string(i + 1), {cores, memory_mb, 0}});
  }
  return nodes;
}

TaskSpec cores_task(int cores) {
  TaskSpec t;
  t.name = "work";
  t.per_rank.cores = cores;
  return t;
}

// Nodes of `cores` cores each, with `busy[i]` of node i's cores held by one running task.
ClusterState busy_cluster(int cores, const std::vector<int>& busy) {
  ClusterState c(nodes_of(cores, busy.size()));
  for (std::size_t i = 0; i < busy.size(); ++i) {
    if (busy[i] == 0) continue;
    Placement p;
    p.fit = Fit::now;
    p.node = static_cast<int>(i);
    c.reserve(cores_task(busy[i]), p);
  }
  return c;
}

TaskSpec mpi(int ranks, int cores_per_rank, int nodes = 0) {
  TaskSpec t;
  t.name = "solver";
  t.kind = chorus::TaskKind::mpi;
  t.ranks = ranks;
  t.per_rank.cores = cores_per_rank;
  t.nodes = nodes;
  return t;
}

// Refuses one node by name: stands in for a placement that keeps work off a lost agent's node.
class AvoidNode final : public chorus::PlacementPolicy {
 public:
  explicit AvoidNode(std::string node) : node_(std::move(node)) {}
  std::string_view name() const override { return "avoid"; }
  Fit filter(const TaskSpec& t, const chorus::NodeView& n) const override {
    return n.info->name == node_ ? Fit::never : chorus::fit_by_resources(t, n);
  }
  double score(const TaskSpec&, const chorus::NodeView&) const override { return 0; }

 private:
  std::string node_;
};

// Scores a node by its free cores: the emptiest wins.
class MostFree final : public chorus::PlacementPolicy {
 public:
  std::string_view name() const override { return "most-free"; }
  Fit filter(const TaskSpec& t, const chorus::NodeView& n) const override {
    return chorus::fit_by_resources(t, n);
  }
  double score(const TaskSpec&, const chorus::NodeView& n) const override { return n.free.cores; }
};

}  // namespace

TEST_CASE("Schedulers.PlacementStep.OneNodeNowLaterNever") {
  ClusterState c = busy_cluster(4, {3, 2});  // free: 1, 2
  chorus::FirstFit ff;
  PlacementStep step(ff);
  auto p = step.place(cores_task(2), c);
  CHECK(p.fit == Fit::now);
  CHECK(p.node == 1);
  CHECK(p.shares.empty());
  CHECK(p.why.empty());

  p = step.place(cores_task(3), c);
  CHECK(p.fit == Fit::later);
  CHECK(p.node == -1);

  p = step.place(cores_task(5), c);
  CHECK(p.fit == Fit::never);
  CHECK(p.why == "can never run here: needs 5 cores, the largest node has 4 cores");
}

TEST_CASE("Schedulers.PlacementStep.TiesGoToTheFirstNodeAndTheHighestScoreWins") {
  ClusterState c = busy_cluster(4, {1, 0, 0});  // free: 3, 4, 4
  chorus::FirstFit ff;
  PlacementStep first(ff);
  CHECK(first.place(cores_task(1), c).node == 0);
  MostFree most;
  PlacementStep emptiest(most);
  CHECK(emptiest.place(cores_task(1), c).node == 1);  // n2 and n3 tie: the first of them
}

TEST_CASE("Schedulers.PlacementStep.NeverNamesTheLargestNode") {
  std::vector<chorus::NodeInfo> nodes{{"small", {2, 1024, 0}}, {"big", {8, 4096, 1}}};
  ClusterState c(nodes);
  chorus::FirstFit ff;
  PlacementStep step(ff);
  auto p = step.place(cores_task(16), c);
  CHECK(p.fit == Fit::never);
  CHECK(p.why ==
        "can never run here: needs 16 cores, the largest node has 8 cores, 4096 MB, 1 GPU");
}

TEST_CASE("Schedulers.PlacementStep.ReserveAndReleaseBookNodesAndShares") {
  ClusterState c(nodes_of(4, 3, 1000));
  chorus::FirstFit ff;
  PlacementStep step(ff);
  TaskSpec one = cores_task(3);
  one.per_rank.memory_mb = 100;
  auto p = step.place(one, c);
  REQUIRE(p.fit == Fit::now);
  c.reserve(one, p);
  CHECK(c.view(0).free == chorus::Resources{1, 900, 0});
  CHECK(c.view(0).running == 1);

  TaskSpec wide = mpi(6, 1);
  wide.per_rank.memory_mb = 10;
  auto s = step.place(wide, c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{1, 4}, {2, 2}});
  CHECK(s.node == 1);
  c.reserve(wide, s);
  CHECK(c.view(1).free == chorus::Resources{0, 960, 0});
  CHECK(c.view(2).free == chorus::Resources{2, 980, 0});
  CHECK(c.view(1).running == 1);
  CHECK(c.view(2).running == 1);

  c.release(wide, s);
  c.release(one, p);
  for (int i = 0; i < 3; ++i) {
    CHECK(c.view(i).free == c.node(i).capacity);
    CHECK(c.view(i).running == 0);
  }
}

TEST_CASE("Schedulers.PlacementStep.CopiesViewTheirOwnNodes") {
  ClusterState a(nodes_of(4, 2));
  ClusterState b = a;
  CHECK(b.views()[1].info == &b.node(1));
  a = b;
  CHECK(a.views()[0].info == &a.node(0));
  CHECK(a.nodes().size() == 2);
  CHECK(a.size() == 2);
}

// The cases below were runtime/mpi_spread's (tests/runtime/test_mpi_spread.cpp), through the step.

TEST_CASE("Schedulers.PlacementStep.SpreadFewestNodesFullestFirst") {
  ClusterState c = busy_cluster(4, {0, 1, 0, 3});  // free: 4, 3, 4, 1
  chorus::FirstFit placement;
  PlacementStep step(placement);
  auto s = step.place(mpi(8, 1), c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{0, 4}, {2, 4}});
  CHECK(s.node == 0);

  // 10 ranks: both empty nodes, then the fullest of the rest.
  s = step.place(mpi(10, 1), c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{0, 4}, {2, 4}, {1, 2}});

  // One node with room: not spread (nodes == 0 fits on one node first).
  s = step.place(mpi(3, 1), c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.node == 0);
  CHECK(s.shares.empty());
}

TEST_CASE("Schedulers.PlacementStep.SpreadCoresPerRankCountWholeRanks") {
  ClusterState c = busy_cluster(4, {1, 1, 0, 0});  // free 3, 3, 4, 4: one 2-core rank on n1, n2
  chorus::FirstFit placement;
  PlacementStep step(placement);
  auto s = step.place(mpi(5, 2), c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{2, 2}, {3, 2}, {0, 1}});
}

TEST_CASE("Schedulers.PlacementStep.SpreadExactNodeCountUsesBlockDistribution") {
  ClusterState c = busy_cluster(4, {0, 0, 0, 0});
  chorus::FirstFit placement;
  PlacementStep step(placement);
  // 5 ranks on exactly 3 nodes: 2, 2, 1 (like srun -N 3 -n 5), even though 2 nodes would hold them.
  auto s = step.place(mpi(5, 1, 3), c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{0, 2}, {1, 2}, {2, 1}});

  // When only two nodes have room for two ranks now, it waits.
  ClusterState busy = busy_cluster(4, {3, 0, 3, 0});
  CHECK(step.place(mpi(6, 1, 3), busy).fit == Fit::later);
  CHECK(chorus::block_ranks(5, 3, 0) == 2);
  CHECK(chorus::block_ranks(5, 3, 2) == 1);
}

TEST_CASE("Schedulers.PlacementStep.SpreadWaitsOrNeverFits") {
  chorus::FirstFit placement;
  PlacementStep step(placement);
  ClusterState c = busy_cluster(4, {2, 2, 2, 2});
  CHECK(step.place(mpi(12, 1), c).fit == Fit::later);

  auto s = step.place(mpi(17, 1), c);
  CHECK(s.fit == Fit::never);
  CHECK(s.shares.empty());
  CHECK(s.why ==
        "can never run on these nodes: needs 17 ranks x 1 core, and the 4 nodes hold 16 such "
        "ranks in all");

  s = step.place(mpi(8, 1, 8), c);
  CHECK(s.fit == Fit::never);
  CHECK(s.why == "can never run on these nodes: needs 8 nodes, has 4");

  s = step.place(mpi(8, 2, 4), c);  // 2 ranks of 2 cores on each of 4 nodes: fits once free
  CHECK(s.fit == Fit::later);
  s = step.place(mpi(12, 2, 4), c);
  CHECK(s.fit == Fit::never);
  CHECK(s.why ==
        "can never run on these nodes: needs 12 ranks x 2 cores on 4 nodes (3 ranks on the "
        "fullest), and no 4 nodes have that room");

  // A rank larger than every node never fits, however many nodes there are.
  s = step.place(mpi(2, 8), c);
  CHECK(s.fit == Fit::never);
}

TEST_CASE("Schedulers.PlacementStep.SpreadPlacementPolicyVetoesNodes") {
  ClusterState c = busy_cluster(4, {0, 0, 0, 0});
  AvoidNode placement("n1");
  PlacementStep step(placement);
  auto s = step.place(mpi(8, 1), c);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{1, 4}, {2, 4}});
  // With n1 refused only 12 cores remain: 16 ranks never fit.
  CHECK(step.place(mpi(16, 1), c).fit == Fit::never);
  CHECK(step.place(mpi(4, 1, 4), c).why ==
        "can never run on these nodes: needs 4 nodes, has 3 usable");
}

TEST_CASE("Schedulers.PlacementStep.RanksFittingCountsWholeRanks") {
  CHECK(chorus::ranks_fitting({2, 0, 0}, {7, 0, 0}, 10) == 3);
  CHECK(chorus::ranks_fitting({2, 100, 0}, {8, 250, 0}, 10) == 2);
  CHECK(chorus::ranks_fitting({1, 0, 1}, {8, 0, 0}, 10) == 0);
  CHECK(chorus::ranks_fitting({1, 0, 0}, {8, 0, 0}, 5) == 5);
  CHECK(chorus::ranks_fitting({4, 0, 0}, {-2, 0, 0}, 5) == 0);
}

namespace {

// Prefers the node with the highest revision of its facts: stands in for a policy that reads
// telemetry the cluster's owner keeps per node.
class NewestFacts final : public chorus::PlacementPolicy {
 public:
  std::string_view name() const override { return "newest-facts"; }
  Fit filter(const TaskSpec& t, const chorus::NodeView& n) const override {
    return chorus::fit_by_resources(t, n);
  }
  double score(const TaskSpec&, const chorus::NodeView& n) const override {
    return n.facts == nullptr ? 0 : static_cast<double>(n.facts->revision);
  }
};

}  // namespace

TEST_CASE("Schedulers.PlacementStep.ViewsCarryTheirIndexAndTheStatesFacts") {
  ClusterState c(nodes_of(4, 3));
  for (int i = 0; i < 3; ++i) {
    CHECK(c.view(i).index == i);
    CHECK(c.view(i).facts == &c.facts(i));
  }
  NewestFacts policy;
  PlacementStep step(policy);
  CHECK(step.place(cores_task(1), c).node == 0);  // all facts equal: the first node
  c.facts(2).revision = 7;
  CHECK(step.place(cores_task(1), c).node == 2);

  // A copy's views read the copy's facts, not the original's.
  ClusterState copy = c;
  copy.facts(1).revision = 9;
  CHECK(copy.view(1).facts == &copy.facts(1));
  CHECK(step.place(cores_task(1), copy).node == 1);
  CHECK(step.place(cores_task(1), c).node == 2);
  ClusterState moved = std::move(copy);
  CHECK(moved.view(1).facts == &moved.facts(1));
  CHECK(step.place(cores_task(1), moved).node == 1);
}
