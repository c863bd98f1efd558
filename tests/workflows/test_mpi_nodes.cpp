// MPI tasks across the nodes of an allocation: `nodes:` and the "can never run" check that knows
// every node (WorkflowLoadOptions::nodes).
#include <doctest/doctest.h>

#include "workflows/workflow_loader.hpp"

namespace {

chorus::WorkflowLoadOptions allocation(int nodes, int cores) {
  chorus::WorkflowLoadOptions options;
  options.base_dir = "/tmp";
  options.largest_node = {cores, 0, 0};
  options.machine_phrase = "the largest node of this allocation";
  for (int i = 0; i < nodes; ++i) options.nodes.push_back({cores, 0, 0});
  return options;
}

chorus::Result<chorus::WorkflowGraph> load(const std::string& tasks,
                                           const chorus::WorkflowLoadOptions& options) {
  return chorus::parse_workflow_text("name: m\ntasks:\n" + tasks, "wf.yaml", options);
}

}  // namespace

TEST_CASE("Workflows.MpiNodes.RanksMaySpreadOverTheAllocation") {
  auto g = load(
      "  - {name: sim, kind: mpi, ranks: 8, command: [./sim]}\n"
      "  - {name: pinned, kind: mpi, ranks: 6, nodes: 3, command: [./sim]}\n",
      allocation(4, 4));
  REQUIRE(g.ok());
  CHECK(g->tasks[0].nodes == 0);
  CHECK(g->tasks[1].nodes == 3);
  // Not in one machine's run: there the largest node is all there is.
  chorus::WorkflowLoadOptions one = allocation(1, 4);
  auto local = load("  - {name: sim, kind: mpi, ranks: 8, command: [./sim]}\n", one);
  REQUIRE(!local.ok());
  CHECK(local.status().message().find("can never run here: needs 8 ranks x 1 core = 8 cores") !=
        std::string::npos);
}

TEST_CASE("Workflows.MpiNodes.NeverFitsTheAllocation") {
  auto opts = allocation(4, 4);
  auto g = load("  - name: wide\n    kind: mpi\n    ranks: 8\n    nodes: 8\n    command: [./sim]\n",
                opts);
  REQUIRE(!g.ok());
  CHECK(g.status().message() ==
        "wf.yaml:6:12: task 'wide' can never run in this allocation: needs 8 nodes, has 4");

  g = load("  - name: big\n    kind: mpi\n    ranks: 9\n    cores_per_rank: 2\n    command: [x]\n",
           opts);
  REQUIRE(!g.ok());
  CHECK(g.status().message() ==
        "wf.yaml:5:12: task 'big' can never run in this allocation: needs 9 ranks x 2 cores, its "
        "4 nodes hold 8 such ranks");

  g = load(
      "  - name: lumpy\n    kind: mpi\n    ranks: 5\n    cores_per_rank: 2\n    nodes: 2\n"
      "    command: [x]\n",
      opts);
  REQUIRE(!g.ok());
  CHECK(g.status().message() ==
        "wf.yaml:7:12: task 'lumpy' can never run in this allocation: needs 5 ranks x 2 cores on "
        "2 nodes (3 ranks on the fullest), and only 0 of its nodes have that room");
}

TEST_CASE("Workflows.MpiNodes.BadValues") {
  auto opts = allocation(4, 4);
  auto g = load(
      "  - {name: a, command: [x], nodes: 2}\n"
      "  - {name: b, kind: mpi, ranks: 2, nodes: 3, command: [x]}\n"
      "  - {name: c, kind: mpi, ranks: 2, nodes: 0, command: [x]}\n",
      opts);
  REQUIRE(!g.ok());
  const std::string m = g.status().message();
  CHECK(m.find("wf.yaml:3:29: 'nodes' in task 'a' needs 'kind: mpi'") != std::string::npos);
  CHECK(m.find("wf.yaml:4:43: 'nodes: 3' in task 'b' is more than its 2 ranks: every node needs "
               "at least one rank") != std::string::npos);
  CHECK(m.find("wf.yaml:5:43: 'nodes' in task 'c' must be between 1 and") != std::string::npos);
}
