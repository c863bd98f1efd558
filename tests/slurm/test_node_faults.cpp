// A node lost in the middle of a `chorus launch` inside a REAL Slurm allocation, for the kinds of
// work the executable-task fault test (test_agents.cpp) does not cover: a service replica on the
// lost node is restarted on a survivor (its users then reach the new endpoint), and an MPI task
// with ranks on a node set down fails and is retried on surviving nodes.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "runtime/store/state_store.hpp"
#include "support/process.hpp"
#include "support/slurm_cluster.hpp"
#include "support/slurm_jobs.hpp"

using namespace chorus::test;

namespace {

std::string batch_host_of(unsigned job) {
  auto r = run_process({"scontrol", "show", "job", std::to_string(job)}, "/");
  std::smatch m;
  return std::regex_search(r.out, m, std::regex(R"(BatchHost=(\S+))")) ? std::string(m[1]) : "";
}

// The `chorus agent` processes (argv[0] is chorus, argv[1] "agent"; not the srun that started
// them, whose arguments look alike) of the run under `dir` on `node`.
std::vector<pid_t> agent_pids_on(const std::string& node, const std::string& dir) {
  std::vector<pid_t> pids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmd = read_file(e.path().string() + "/cmdline");
    if (cmd.rfind(chorus_bin() + '\0' + "agent" + '\0', 0) != 0) continue;
    if (cmd.find(dir) == std::string::npos) continue;
    const std::string env = read_file(e.path().string() + "/environ");
    if (env.find("SLURMD_NODENAME=" + node + '\0') == std::string::npos) continue;
    pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

// Processes still working in `dir`. On the virtual cluster a node set down keeps its processes
// (a real one takes them with it), and a replica whose agent was killed is orphaned: the test
// ends them, or every run of the suite would leave one service process behind.
std::vector<pid_t> pids_in(const std::string& dir) {
  std::vector<pid_t> pids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path() / "cwd", ec).string() != dir) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (pid != ::getpid()) pids.push_back(pid);
  }
  return pids;
}

// For a job that did not end in time: the run's tasks as the journal has them and the job's
// steps as Slurm has them (what was left running, and where); then the job is cancelled, so the
// next test gets the nodes.
std::string where_it_stands(unsigned job, const std::string& dir) {
  auto status = run_process({chorus_bin(), "status", "--state", "st", "latest"}, dir);
  auto steps = run_process({"squeue", "-s", "-j", std::to_string(job)}, "/");
  run_process({"scancel", std::to_string(job)}, "/");
  return "\nchorus status:\n" + status.out + status.err + "\nsteps:\n" + steps.out + steps.err +
         "\nsolver.nodes: " + read_file(dir + "/solver.nodes");
}

}  // namespace

TEST_CASE("Slurm.NodeFaults.ServiceRestartsElsewhereAndMpiTaskRetries") {
  SlurmCluster::get();
  TempDir dir;
  const std::string bin = binary_dir() + "/tests/";
  // The MPI task: 4 ranks on exactly 2 nodes; each rank notes its node, then works 6 s.
  // The service: one replica (any port), restarted on failure. Its users wait for 'go', which the
  // test writes after the fault, so they need the restarted replica.
  write_file(dir / "wf.yaml", R"Y(name: faults
services:
  - name: echo
    command: 'echo $SLURMD_NODENAME >> svc.nodes; exec )Y" +
                                  bin + R"Y(svc_echo 0 --print'
    ready: {stdout: 'listening on (\S+)', timeout: 30s}
    restart: {policy: on-failure, max: 2}
tasks:
  - name: solver
    kind: mpi
    ranks: 4
    nodes: 2
    retries: 1
    command: 'echo $SLURMD_NODENAME >> solver.nodes; sleep 6; exec )Y" +
                                  bin + R"Y(mpi_hello'
  - name: use
    foreach: {i: "range(0, 2)"}
    uses: [echo]
    retries: 2
    command: [bash, -c, 'while [ ! -e go ]; do sleep 0.2; done; ep=$CHORUS_SERVICE_ECHO; exec 3<>/dev/tcp/${{ep%:*}}/${{ep##*:}}; echo ping-{i} >&3; read -r reply <&3; echo "$ep $reply" > use.{i}']
)Y");
  unsigned job =
      submit_job({"-N", "4", "--exclusive", "--no-kill"},
                 chorus_bin() + " launch wf.yaml --state st --agent-timeout 2s", dir.path());
  // Wait for the first attempt's 4 ranks and the service's first replica.
  std::vector<std::string> solver, svc;
  bool started = eventually(
      [&] {
        solver = read_lines(dir / "solver.nodes");
        svc = read_lines(dir / "svc.nodes");
        return solver.size() == 4 && svc.size() == 1;
      },
      60);
  INFO("job output:\n", read_file(dir / "job.out"));
  REQUIRE(started);
  // The batch host runs the coordinator (and the srun that started the agents): it stays up.
  const std::string batch_host = batch_host_of(job);
  REQUIRE(!batch_host.empty());
  // A node of the solver goes down in Slurm; the service's node loses its agent (SIGKILL), or
  // goes down too when it is not the batch host.
  std::set<std::string> lost;
  for (const auto& n : solver) {
    if (n != batch_host) {
      lost.insert(n);
      break;
    }
  }
  REQUIRE(lost.size() == 1);
  if (svc[0] != batch_host) lost.insert(svc[0]);
  for (const auto& n : lost) {
    auto r = run_process(
        {"scontrol", "update", "nodename=" + n, "state=down", "reason=chorus-fault-test"}, "/");
    CHECK(r.exit_code == 0);
  }
  if (svc[0] == batch_host) {
    auto victims = agent_pids_on(svc[0], dir.path());
    CHECK(victims.size() == 1);
    for (pid_t p : victims) ::kill(p, SIGKILL);
    lost.insert(svc[0]);
  }
  // The restarted replica's node is the proof the fault was seen; then the users may go.
  bool restarted = eventually([&] { return read_lines(dir / "svc.nodes").size() >= 2; }, 60);
  write_file(dir / "go", "");
  std::string state = wait_batch_job(job, 120);
  const std::string stuck = state == "COMPLETED" ? "" : where_it_stands(job, dir.path());
  for (const auto& n : lost) {
    if (n != batch_host) run_process({"scontrol", "update", "nodename=" + n, "state=resume"}, "/");
  }
  for (pid_t p : pids_in(std::filesystem::canonical(dir.path()).string())) ::kill(p, SIGKILL);
  INFO("state: ", state, "\njob output:\n", read_file(dir / "job.out"), stuck);
  REQUIRE(restarted);
  CHECK(state == "COMPLETED");

  // The service ran again, on a node that was not set down.
  svc = read_lines(dir / "svc.nodes");
  CHECK(lost.count(svc.back()) == 0);
  // The solver's second attempt ran its 4 ranks on 2 survivors, as one MPI world.
  solver = read_lines(dir / "solver.nodes");
  REQUIRE(solver.size() == 8);
  std::set<std::string> second(solver.begin() + 4, solver.end());
  CHECK(second.size() == 2);
  for (const auto& n : second) CHECK(lost.count(n) == 0);

  auto store = chorus::open_sqlite_store(dir / "st/chorus.db").value();
  auto run = store->find_run("latest").value();
  CHECK(run.status == chorus::RunStatus::succeeded);
  auto logs =
      run_process({chorus_bin(), "logs", "--state", dir / "st", run.id, "solver"}, dir.path());
  INFO("solver's output:\n", logs.out, logs.err);
  CHECK(std::count(logs.out.begin(), logs.out.end(), '\n') == 4);
  CHECK(logs.out.find("of 4 sum 6 node") != std::string::npos);
  // Users reached the restarted replica's endpoint.
  for (int i = 0; i < 2; ++i) {
    auto lines = read_lines(dir / ("use." + std::to_string(i)));
    REQUIRE(lines.size() == 1);
    CHECK(std::regex_match(lines[0], std::regex("127\\.0\\.0\\.1:\\d+ ping-" + std::to_string(i))));
  }
}

// An MPI step started from the coordinator's host on a node whose agent then dies: Slurm still
// runs the step there (the node is up), but the coordinator counts the node as gone, so the step
// is stopped and reported lost, and the retry runs on nodes with live agents. Without this the
// run would wait for the first attempt (10 minutes here).
TEST_CASE("Slurm.NodeFaults.MpiStepOnANodeWhoseAgentDiedIsStoppedAndRetried") {
  SlurmCluster::get();
  TempDir dir;
  const std::string bin = binary_dir() + "/tests/";
  // The first attempt's 4 ranks see at most 4 lines and wait 10 minutes; the retry's go at once.
  write_file(dir / "wf.yaml", R"Y(name: agentloss
tasks:
  - name: solver
    kind: mpi
    ranks: 4
    nodes: 2
    retries: 1
    command: 'echo $SLURMD_NODENAME >> solver.nodes; if [ $(wc -l < solver.nodes) -le 4 ]; then sleep 600; fi; exec )Y" +
                                  bin + R"Y(mpi_hello'
)Y");
  unsigned job =
      submit_job({"-N", "3", "--exclusive"},
                 chorus_bin() + " launch wf.yaml --state st --agent-timeout 2s", dir.path());
  std::vector<std::string> solver;
  bool started = eventually(
      [&] {
        solver = read_lines(dir / "solver.nodes");
        return solver.size() == 4;
      },
      60);
  INFO("job output:\n", read_file(dir / "job.out"));
  REQUIRE(started);
  const std::string batch_host = batch_host_of(job);
  std::string victim;
  for (const auto& n : solver) {
    if (n != batch_host) victim = n;
  }
  REQUIRE(!victim.empty());
  auto agents = agent_pids_on(victim, dir.path());
  CHECK(agents.size() == 1);
  for (pid_t p : agents) ::kill(p, SIGKILL);
  const std::string state = wait_batch_job(job, 60);
  const std::string stuck = state == "COMPLETED" ? "" : where_it_stands(job, dir.path());
  for (pid_t p : pids_in(std::filesystem::canonical(dir.path()).string())) ::kill(p, SIGKILL);
  INFO("state: ", state, "\njob output:\n", read_file(dir / "job.out"), stuck);
  CHECK(state == "COMPLETED");
  const std::string out = read_file(dir / "job.out");
  CHECK(out.find("lost: the agent on node " + victim + " is lost and this task had ranks there") !=
        std::string::npos);
  // The retry's ranks ran on the two nodes whose agents live.
  solver = read_lines(dir / "solver.nodes");
  REQUIRE(solver.size() == 8);
  std::set<std::string> second(solver.begin() + 4, solver.end());
  CHECK(second.size() == 2);
  CHECK(second.count(victim) == 0);
  auto logs =
      run_process({chorus_bin(), "logs", "--state", dir / "st", "latest", "solver"}, dir.path());
  CHECK(logs.out.find("of 4 sum 6 node") != std::string::npos);
}
