// Spreading an MPI task's ranks over several nodes (runtime/mpi_spread.hpp).
#include <doctest/doctest.h>

#include <vector>

#include "runtime/mpi_spread.hpp"
#include "runtime/store/state_store.hpp"
#include "schedulers/placement/first_fit.hpp"

namespace {

using chorus::Fit;
using chorus::RankShare;

struct Cluster {
  std::vector<chorus::NodeInfo> nodes;
  std::vector<chorus::NodeView> views;

  // Nodes of `cores` cores each, with `busy[i]` of node i's cores held.
  Cluster(int cores, std::vector<int> busy) {
    for (std::size_t i = 0; i < busy.size(); ++i) {
      nodes.push_back({"n" + std::to_string(i + 1), {cores, 0, 0}});
    }
    for (std::size_t i = 0; i < busy.size(); ++i) {
      views.push_back({&nodes[i], {cores - busy[i], 0, 0}, busy[i] > 0 ? 1 : 0});
    }
  }
};

chorus::TaskSpec mpi(int ranks, int cores_per_rank, int nodes = 0) {
  chorus::TaskSpec t;
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
  Fit filter(const chorus::TaskSpec& t, const chorus::NodeView& n) const override {
    return n.info->name == node_ ? Fit::never : chorus::fit_by_resources(t, n);
  }
  double score(const chorus::TaskSpec&, const chorus::NodeView&) const override { return 0; }

 private:
  std::string node_;
};

}  // namespace

TEST_CASE("Runtime.MpiSpread.FewestNodesFullestFirst") {
  Cluster c(4, {0, 1, 0, 3});  // free: 4, 3, 4, 1
  chorus::FirstFit placement;
  chorus::TaskSpec probe;
  auto s = chorus::spread_mpi_task(mpi(8, 1), c.views, placement, probe);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{0, 4}, {2, 4}});
  CHECK(chorus::spread_node_field(s.shares, c.views, mpi(8, 1)) == "n1:4,n3:4");

  // 10 ranks: both empty nodes, then the fullest of the rest.
  s = chorus::spread_mpi_task(mpi(10, 1), c.views, placement, probe);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{0, 4}, {2, 4}, {1, 2}});
}

TEST_CASE("Runtime.MpiSpread.CoresPerRankCountWholeRanks") {
  Cluster c(4, {1, 1, 0, 0});  // free 3, 3, 4, 4: one 2-core rank each on n1, n2
  chorus::FirstFit placement;
  chorus::TaskSpec probe;
  auto s = chorus::spread_mpi_task(mpi(5, 2), c.views, placement, probe);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{2, 2}, {3, 2}, {0, 1}});
  CHECK(chorus::spread_node_field(s.shares, c.views, mpi(5, 2)) == "n3:4,n4:4,n1:2");
}

TEST_CASE("Runtime.MpiSpread.ExactNodeCountUsesBlockDistribution") {
  Cluster c(4, {0, 0, 0, 0});
  chorus::FirstFit placement;
  chorus::TaskSpec probe;
  // 5 ranks on exactly 3 nodes: 2, 2, 1 (like srun -N 3 -n 5), even though 2 nodes would hold them.
  auto s = chorus::spread_mpi_task(mpi(5, 1, 3), c.views, placement, probe);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{0, 2}, {1, 2}, {2, 1}});

  // When only two nodes have room for two ranks now, it waits.
  Cluster busy(4, {3, 0, 3, 0});
  CHECK(chorus::spread_mpi_task(mpi(6, 1, 3), busy.views, placement, probe).fit == Fit::later);
}

TEST_CASE("Runtime.MpiSpread.WaitsOrNeverFits") {
  chorus::FirstFit placement;
  chorus::TaskSpec probe;
  Cluster c(4, {2, 2, 2, 2});
  CHECK(chorus::spread_mpi_task(mpi(12, 1), c.views, placement, probe).fit == Fit::later);

  auto s = chorus::spread_mpi_task(mpi(17, 1), c.views, placement, probe);
  CHECK(s.fit == Fit::never);
  CHECK(s.why == "needs 17 ranks x 1 core, and the 4 nodes hold 16 such ranks in all");

  s = chorus::spread_mpi_task(mpi(8, 1, 8), c.views, placement, probe);
  CHECK(s.fit == Fit::never);
  CHECK(s.why == "needs 8 nodes, has 4");

  // A rank larger than every node never fits, however many nodes there are.
  s = chorus::spread_mpi_task(mpi(2, 8), c.views, placement, probe);
  CHECK(s.fit == Fit::never);
}

TEST_CASE("Runtime.MpiSpread.PlacementPolicyVetoesNodes") {
  Cluster c(4, {0, 0, 0, 0});
  AvoidNode placement("n1");
  chorus::TaskSpec probe;
  auto s = chorus::spread_mpi_task(mpi(8, 1), c.views, placement, probe);
  REQUIRE(s.fit == Fit::now);
  CHECK(s.shares == std::vector<RankShare>{{1, 4}, {2, 4}});
  // With n1 refused only 12 cores remain: 16 ranks never fit.
  CHECK(chorus::spread_mpi_task(mpi(16, 1), c.views, placement, probe).fit == Fit::never);
  CHECK(chorus::spread_mpi_task(mpi(4, 1, 4), c.views, placement, probe).why ==
        "needs 4 nodes, has 3 usable");
}

TEST_CASE("Runtime.MpiSpread.NodeFieldReadsBack") {
  auto parts = chorus::split_node_field("n1:8,n2:4", 12);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].node == "n1");
  CHECK(parts[0].cores == 8);
  CHECK(parts[1].node == "n2");
  CHECK(parts[1].cores == 4);
  parts = chorus::split_node_field("cn01", 3);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].node == "cn01");
  CHECK(parts[0].cores == 3);
  CHECK(chorus::split_node_field("", 1).empty());
}
