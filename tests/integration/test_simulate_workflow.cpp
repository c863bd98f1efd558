// `chorus simulate --workload wf.yaml`: a workflow is simulated with the users, jobs and
// dependencies a live run has (one job per task entry and user, `job:` groups), its own user
// weights, and runtimes from `estimate:` or, failing that, from the journal's earlier runs.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// bob floods the allocation with one long sweep; alice's short sweep comes in the same file;
// `merge` (bob's) waits for both sweeps, across jobs and users.
const char* kShared = R"Y(name: shared
tasks:
  - name: flood
    user: bob
    command: [x]
    estimate: 2s
    foreach: {i: "range(0, 8)"}
  - name: quick
    user: alice
    command: [x]
    estimate: 0.1s
    foreach: {i: "range(0, 3)"}
  - {name: merge, user: bob, command: [x], estimate: 1s, after: [flood, quick]}
)Y";

struct Record {
  double start = 0, finish = 0, response = 0;
  int tasks = 0;
};

// policy -> job -> record, from `--records FILE.csv`
// (policy,job,user,class,size,arrival_s,start_s,finish_s,response_s,work_core_s,...,tasks).
std::map<std::string, std::map<std::string, Record>> read_records(const std::string& csv) {
  std::map<std::string, std::map<std::string, Record>> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) f.push_back(cell);
    REQUIRE(f.size() >= 13);
    out[f[0]][f[1]] = Record{std::stod(f[6]), std::stod(f[7]), std::stod(f[8]), std::stoi(f[12])};
  }
  return out;
}

}  // namespace

TEST_CASE("Integration.SimulateWorkflow.UsersJobsAndDependenciesAsLive") {
  TempDir dir;
  write_file(dir / "wf.yaml", kShared);
  const auto run = run_chorus({"simulate", "--workload", "wf.yaml", "--cluster", "1x2", "--compare",
                               "fifo,uwfq", "--records", "r.csv"},
                              dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("3 jobs, 12 tasks") != std::string::npos);
  auto records = read_records(read_file(dir / "r.csv"));
  for (const char* policy : {"fifo", "uwfq"}) {
    CAPTURE(policy);
    auto& jobs = records[policy];
    REQUIRE(jobs.size() == 3);
    CHECK(jobs["flood"].tasks == 8);
    CHECK(jobs["quick"].tasks == 3);
    // merge waits for both sweeps, across jobs and users.
    CHECK(jobs["merge"].start >= jobs["flood"].finish);
    CHECK(jobs["merge"].start >= jobs["quick"].finish);
  }
  // FIFO runs the flood first (8 x 2 s on 2 cores); uwfq lets alice's short job through first.
  CHECK(records["fifo"]["quick"].finish >= records["fifo"]["flood"].finish - 2.0);
  CHECK(records["uwfq"]["quick"].finish < 1.0);
  CHECK(records["uwfq"]["quick"].response < records["fifo"]["quick"].response);
}

TEST_CASE("Integration.SimulateWorkflow.ItsOwnUserWeightsUnlessOverridden") {
  // Two equal users; the file weighs bob 3:1. Under uwfq bob's job then finishes first in the
  // virtual system, so it is served first; --weights alice=3 turns that around.
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: weighted
scheduler: {queue: uwfq, weights: {bob: 3}}
tasks:
  - {name: a, user: alice, command: [x], estimate: 1s, foreach: {i: "range(0, 4)"}}
  - {name: b, user: bob, command: [x], estimate: 1s, foreach: {i: "range(0, 4)"}}
)Y");
  auto run = run_chorus(
      {"simulate", "--workload", "wf.yaml", "--cluster", "1x1", "--records", "r.csv"}, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto records = read_records(read_file(dir / "r.csv"));
  CHECK(records["uwfq"]["b"].finish < records["uwfq"]["a"].finish);

  run = run_chorus({"simulate", "--workload", "wf.yaml", "--cluster", "1x1", "--weights", "alice=3",
                    "--records", "r.csv"},
                   dir.path());
  REQUIRE(run.exit_code == 0);
  records = read_records(read_file(dir / "r.csv"));
  CHECK(records["uwfq"]["a"].finish < records["uwfq"]["b"].finish);
}

TEST_CASE("Integration.SimulateWorkflow.RuntimesFromTheJournalOrALocatedError") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: learned
tasks:
  - {name: prep, command: [sleep, "0.3"]}
  - {name: work, command: [sleep, "0.1"], foreach: {i: "range(0, 2)"}, after: [prep]}
)Y");
  // Never run here: no runtimes to simulate, each entry located.
  auto run = run_chorus({"simulate", "--workload", "wf.yaml"}, dir.path());
  INFO(run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("wf.yaml:3:12: chorus simulate needs a runtime for every task, and 'prep' "
                     "has none") != std::string::npos);
  CHECK(run.err.find("wf.yaml:4:12: chorus simulate needs a runtime for every task, and 'work' "
                     "(2 members) have none") != std::string::npos);

  // After one real run, the journal's runtimes stand in for the missing estimates.
  run = run_chorus({"run", "wf.yaml"}, dir.path());
  REQUIRE(run.exit_code == 0);
  run = run_chorus({"simulate", "--workload", "wf.yaml", "--cluster", "1x4", "--records", "r.csv"},
                   dir.path());
  REQUIRE(run.exit_code == 0);
  auto records = read_records(read_file(dir / "r.csv"));
  const Record& prep = records["uwfq"]["prep"];
  const Record& work = records["uwfq"]["work"];
  CHECK(prep.finish == doctest::Approx(0.3).epsilon(0.5));  // measured: 0.3 s plus spawn time
  CHECK(work.start >= prep.finish);
  CHECK(work.finish - work.start == doctest::Approx(0.1).epsilon(1.0));
}

TEST_CASE("Integration.SimulateWorkflow.ServicesAreLeftOutAndSaidSo") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: withsvc
services:
  - {name: echo, command: [sleep, "100"], ready: {stdout: up}}
tasks:
  - {name: a, command: [x], estimate: 1s, uses: [echo]}
)Y");
  const auto run = run_chorus({"simulate", "--workload", "wf.yaml"}, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(
      run.err.find("services are not simulated (they hold their cores for the whole run): echo") !=
      std::string::npos);
  CHECK(run.out.find("1 jobs, 1 tasks") != std::string::npos);
}

TEST_CASE("Integration.SimulateWorkflow.MpiTasksSpreadOverNodesAsLive") {
  // 8 ranks on 2x4 nodes: spread over both (a live run's PlacementStep), not refused as one task
  // of 8 cores; `pair` (4 ranks on exactly 2 nodes) runs first, beside prep.
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: mpi
tasks:
  - {name: prep, command: [x], estimate: 1s}
  - {name: solve, kind: mpi, ranks: 8, command: [x], estimate: 5s, after: [prep]}
  - {name: pair, kind: mpi, ranks: 4, nodes: 2, command: [x], estimate: 2s}
)Y");
  const auto run = run_chorus({"simulate", "--workload", "wf.yaml", "--cluster", "2x4", "--queue",
                               "fifo", "--records", "r.csv"},
                              dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto jobs = read_records(read_file(dir / "r.csv"))["fifo"];
  CHECK(jobs["pair"].start == doctest::Approx(0));
  CHECK(jobs["solve"].start == doctest::Approx(2));  // waits for pair's ranks to leave
  CHECK(jobs["solve"].finish == doctest::Approx(7));
}

TEST_CASE("Integration.SimulateWorkflow.KubernetesPlacementBaselinesByName") {
  // least-allocated, balanced-allocation and kube-default: chosen by name in `chorus simulate
  // --placement` and in a workflow's `scheduler: {placement: ...}` for a live run.
  TempDir dir;
  for (const std::string name : {"least-allocated", "balanced-allocation", "kube-default"}) {
    CAPTURE(name);
    write_file(dir / "wf.yaml", std::string("name: k\nscheduler: {placement: ") + name +
                                    "}\ntasks:\n  - {name: a, command: [\"true\"], estimate: 1s, "
                                    "foreach: {i: \"range(0, 3)\"}}\n");
    const auto sim = run_chorus({"simulate", "--workload", "wf.yaml", "--cluster", "1x2",
                                 "--placement", name, "--records", "r.csv"},
                                dir.path());
    INFO(sim.err);
    CHECK(sim.exit_code == 0);
    // 3 one-second tasks on 2 cores.
    CHECK(read_records(read_file(dir / "r.csv"))["uwfq"]["a"].finish == doctest::Approx(2));
    const auto live = run_chorus({"run", "wf.yaml"}, dir.path());
    INFO(live.err);
    CHECK(live.exit_code == 0);
  }
}

TEST_CASE("Integration.SimulateWorkflow.AFlagNoPolicyTakesIsRefused") {
  // --grace on a policy without a grace period used to be refused by that policy; now that each
  // policy takes what it declares, a flag no policy of the run takes is refused by simulate.
  TempDir dir;
  auto run = run_chorus(
      {"simulate", "--workload", "gen:4large", "--queue", "fair", "--grace", "1s"}, dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--grace: queue policy 'fair' takes no 'grace' (cfq, uwfq do)") !=
        std::string::npos);
  run = run_chorus(
      {"simulate", "--workload", "gen:4large", "--compare", "fifo,fair", "--weights", "u1=2"},
      dir.path());
  INFO(run.err);
  CHECK(run.exit_code == 0);  // fair takes weights, fifo runs without them
  run = run_chorus(
      {"simulate", "--workload", "gen:4large", "--compare", "fifo,uwfq", "--grace", "1s"},
      dir.path());
  INFO(run.err);
  CHECK(run.exit_code == 0);
}
