// MPI tasks in the simulator: ranks spread over nodes by the same PlacementStep as a live run,
// waiting for room, refused when the cluster can never hold them, and read from JSON and CSV.
#include <doctest/doctest.h>

#include <string>

#include "schedulers/placement/first_fit.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_io.hpp"

using namespace chorus;
using namespace chorus::sim;

namespace {

SimTask plain(double runtime, int cores) {
  SimTask t;
  t.runtime_s = runtime;
  t.cores = cores;
  return t;
}

SimTask mpi_task(double runtime, int ranks, int cores_per_rank, int nodes = 0) {
  SimTask t = plain(runtime, cores_per_rank);
  t.ranks = ranks;
  t.nodes = nodes;
  return t;
}

SimJob one_task_job(std::string id, double arrival, SimTask task) {
  SimJob j;
  j.id = std::move(id);
  j.user = "u";
  j.arrival_s = arrival;
  j.tasks.push_back(std::move(task));
  return j;
}

Result<SimResult> run(const Workload& w, const std::string& cluster) {
  auto c = parse_cluster(cluster);
  REQUIRE(c.ok());
  FifoQueue fifo;
  FirstFit ff;
  return simulate(w, *c, fifo, ff);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Schedulers.SimMpi.RanksSpreadOverNodesAtOnce") {
  // 12 ranks of 1 core on 4x4: too wide for one node, spread over three of them at time 0.
  // Then a 4-core task fits the fourth node beside it.
  Workload w;
  w.jobs = {one_task_job("wide", 0, mpi_task(10, 12, 1)), one_task_job("small", 0, plain(2, 4))};
  auto r = run(w, "4x4");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->jobs[0].start_s == doctest::Approx(0));
  CHECK(r->jobs[0].finish_s == doctest::Approx(10));
  CHECK(r->jobs[0].work == doctest::Approx(120));
  CHECK(r->jobs[1].start_s == doctest::Approx(0));
  CHECK(r->decisions == 2);
}

TEST_CASE("Schedulers.SimMpi.ExactNodeCountWaitsForRoomOnEnoughNodes") {
  // 2x4: a 3-core task holds node 1 until 5 s; 4 ranks on exactly 2 nodes need 2 cores on each,
  // so they wait for it, though 5 cores are free at once.
  Workload w;
  w.jobs = {one_task_job("busy", 0, plain(5, 3)), one_task_job("mpi", 1, mpi_task(2, 4, 1, 2))};
  auto r = run(w, "2x4");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->jobs[1].start_s == doctest::Approx(5));
  CHECK(r->jobs[1].finish_s == doctest::Approx(7));

  // Without a node count, the same 4 ranks fit one node at once.
  w.jobs[1].tasks[0].nodes = 0;
  r = run(w, "2x4");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->jobs[1].start_s == doctest::Approx(1));
}

TEST_CASE("Schedulers.SimMpi.WideTaskWaitsUntilRanksFit") {
  // 2x4: two 3-core tasks leave one core per node until 4 s; 6 ranks wait, then spread.
  Workload w;
  w.jobs = {one_task_job("a", 0, plain(4, 3)), one_task_job("b", 0, plain(4, 3)),
            one_task_job("mpi", 1, mpi_task(3, 6, 1))};
  auto r = run(w, "2x4");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->jobs[2].start_s == doctest::Approx(4));
  CHECK(r->jobs[2].finish_s == doctest::Approx(7));
  CHECK(r->makespan_s == doctest::Approx(7));
}

TEST_CASE("Schedulers.SimMpi.RanksTheClusterCannotHoldAreUnsatisfiable") {
  Workload w;
  w.jobs = {one_task_job("huge", 0, mpi_task(1, 17, 1))};
  auto r = run(w, "4x4");
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::unsatisfiable);
  CHECK(r.status().message() ==
        "job 'huge' task 0 can never run on these nodes: needs 17 ranks x 1 core, and the 4 "
        "nodes hold 16 such ranks in all");

  w.jobs = {one_task_job("pinned", 0, mpi_task(1, 8, 1, 1))};  // nodes 1: never across nodes
  r = run(w, "4x4");
  REQUIRE(!r.ok());
  CHECK(r.status().message() ==
        "job 'pinned' task 0 can never run here: needs 8 cores, the largest node has 4 cores");
}

TEST_CASE("Schedulers.SimMpi.ReadersTakeRanksAndNodes") {
  auto j = read_workload_json(R"([{"id": "j", "user": "u", "arrival": 0, "tasks": [
      {"runtime": 2, "cores": 2, "ranks": 8, "nodes": 2}, {"runtime": 1, "ranks": 3}]}])",
                              "w.json");
  REQUIRE_MESSAGE(j.ok(), j.status().message());
  CHECK(j->jobs[0].tasks[0].ranks == 8);
  CHECK(j->jobs[0].tasks[0].nodes == 2);
  CHECK(j->jobs[0].tasks[0].cores == 2);
  CHECK(j->jobs[0].tasks[1].ranks == 3);
  CHECK(j->jobs[0].tasks[1].nodes == 0);
  CHECK(j->jobs[0].work() == doctest::Approx(2 * 2 * 8 + 3));

  auto c = read_workload_csv(
      "job,user,arrival,runtime,cores,ranks,nodes\nj,u,0,2,2,8,2\n"
      "j,u,0,1,1,,\n",
      "w.csv");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->jobs[0].tasks[0].ranks == 8);
  CHECK(c->jobs[0].tasks[0].nodes == 2);
  CHECK(c->jobs[0].tasks[1].ranks == 0);
}

TEST_CASE("Schedulers.SimMpi.BadShapesAreLocatedErrors") {
  auto zero = read_workload_json(
      R"([{"id": "j", "user": "u", "arrival": 0, "tasks": [{"runtime": 1, "ranks": 0}]}])",
      "w.json");
  REQUIRE(!zero.ok());
  CHECK(zero.status().message() ==
        "w.json: jobs[0].tasks[0].ranks: 0 is out of range (1 to 1048576)");

  auto lone = read_workload_json(
      R"([{"id": "j", "user": "u", "arrival": 0, "tasks": [{"runtime": 1, "nodes": 2}]}])",
      "w.json");
  REQUIRE(!lone.ok());
  CHECK(lone.status().message() ==
        "w.json: jobs[0].tasks[0].nodes needs ranks (only an MPI task spreads over nodes)");

  auto wide = read_workload_json(
      R"([{"id": "j", "user": "u", "arrival": 0, "tasks": [{"runtime": 1, "ranks": 2, "nodes": 3}]}])",
      "w.json");
  REQUIRE(!wide.ok());
  CHECK(wide.status().message() ==
        "w.json: jobs[0].tasks[0].nodes: 3 is out of range (1 to its 2 ranks: every node needs "
        "at least one rank)");

  auto csv = read_workload_csv("job,user,arrival,runtime,ranks\nj,u,0,1,1.5\n", "w.csv");
  REQUIRE(!csv.ok());
  CHECK(csv.status().message() == "w.csv:2: ranks: 1.5 is not a whole number from 1 to 1048576");

  auto csv_nodes =
      read_workload_csv("job,user,arrival,runtime,ranks,nodes\nj,u,0,1,2,4\n", "w.csv");
  REQUIRE(!csv_nodes.ok());
  CHECK(contains(csv_nodes.status().message(), "w.csv:2: nodes: 4 is out of range (1 to its 2"));

  // Built by hand, past the readers: validate_workload refuses the shape too.
  Workload w;
  w.jobs = {one_task_job("j", 0, mpi_task(1, 2, 1, 3))};
  auto r = run(w, "4x4");
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  CHECK(contains(r.status().message(), "spreads 2 ranks over 3 nodes"));
}
