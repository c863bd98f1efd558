// A service on agents inside a REAL Slurm allocation: `chorus launch` runs the replica on an
// agent's node, its readiness probe passes, and the tasks that use it get its endpoint and talk
// to it.
#include <doctest/doctest.h>

#include <regex>

#include "runtime/store/state_store.hpp"
#include "support/slurm_cluster.hpp"
#include "support/slurm_jobs.hpp"
#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("Slurm.AgentsServices.ReplicaRunsOnAnAgentNodeAndUsersReachIt") {
  SlurmCluster::get();
  TempDir dir;
  // 'echo' is ready by its stdout, 'web' by a tcp probe: probed at the address its agent
  // connected from (127.0.0.1 here), since the virtual nodes' names n1..n4 do not resolve.
  write_file(dir / "wf.yaml", R"Y(name: svcagents
services:
  - name: echo
    command: 'echo $SLURMD_NODENAME > svc.node; exec )Y" +
                                  binary_dir() + R"Y(/tests/svc_echo 23987 --print'
    ready: {stdout: 'listening on (\S+)', timeout: 30s}
  - name: web
    command: [)Y" + binary_dir() + R"Y(/tests/svc_echo, "23989"]
    ready: {tcp: 23989, timeout: 30s}
tasks:
  - name: browse
    uses: [web]
    command: [bash, -c, 'ep=$CHORUS_SERVICE_WEB; exec 3<>/dev/tcp/${{ep%:*}}/${{ep##*:}}; echo hi >&3; read -r reply <&3; echo "$ep $reply" > browse.out']
  - name: use
    foreach: {i: "range(0, 4)"}
    uses: [echo]
    command: [bash, -c, 'ep=$CHORUS_SERVICE_ECHO; exec 3<>/dev/tcp/${{ep%:*}}/${{ep##*:}}; echo ping-{i} >&3; read -r reply <&3; echo "$SLURMD_NODENAME $ep $reply" > use.{i}']
)Y");
  unsigned job = submit_job({"-N", "2", "--exclusive"}, chorus_bin() + " launch wf.yaml --state st",
                            dir.path());
  std::string state = wait_batch_job(job);
  INFO("job output:\n", read_file(dir / "job.out"));
  REQUIRE(state == "COMPLETED");

  // The replica ran on an agent's node (journaled there), and was ready at its endpoint.
  auto service_node = read_lines(dir / "svc.node");
  REQUIRE(service_node.size() == 1);
  CHECK(std::regex_match(service_node[0], std::regex("n[1-4]")));
  auto store = chorus::open_sqlite_store(dir / "st/chorus.db").value();
  auto run = store->find_run("latest").value();
  CHECK(run.status == chorus::RunStatus::succeeded);
  bool placed = false;
  bool ready = false;
  std::string seen;
  auto events = store->events(run.id).value();  // a copy: the Result is a temporary
  for (const auto& e : events) {
    if (e.name != "echo") continue;
    seen += std::string(chorus::to_string(e.state)) + " on '" + e.node + "': " + e.detail + "\n";
    if (e.state != chorus::TaskState::running) continue;
    placed |= e.node == service_node[0];
    ready |= e.detail.find("ready at 127.0.0.1:23987") != std::string::npos;
  }
  INFO("the service's events:\n", seen);
  CHECK(placed);
  CHECK(ready);
  // Every user got the endpoint and an answer from the service.
  CHECK(read_lines(dir / "browse.out") == std::vector<std::string>{"127.0.0.1:23989 hi"});
  for (int i = 0; i < 4; ++i) {
    auto lines = read_lines(dir / ("use." + std::to_string(i)));
    REQUIRE(lines.size() == 1);
    CHECK(std::regex_match(lines[0],
                           std::regex("n[1-4] 127\\.0\\.0\\.1:23987 ping-" + std::to_string(i))));
  }
}
