// `chorus serve` inside a REAL Slurm allocation (tests/slurm/cluster.sh): the instance serves
// the allocation's nodes through one agent per node; a submission from outside the job (through
// the state folder's socket) runs on every node; scancel ends the instance and its agents.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "support/process.hpp"
#include "support/slurm_cluster.hpp"
#include "support/slurm_jobs.hpp"

using namespace chorus::test;

namespace {

// Cancels the job at the end of the case, whatever happened.
struct JobGuard {
  unsigned job;
  ~JobGuard() { (void)run_process({"scancel", std::to_string(job)}, "/"); }
};

// The nodes (SLURMD_NODENAME) of the `chorus agent` processes whose key folder is under `dir`
// (srun's own process, which names the same command, has none).
std::set<std::string> agent_nodes(const std::string& dir) {
  std::set<std::string> nodes;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_file(e.path().string() + "/cmdline");
    for (char& c : cmd) c = c == '\0' ? ' ' : c;
    if (cmd.find(" agent --connect ") == std::string::npos || cmd.find(dir) == std::string::npos) {
      continue;
    }
    const std::string env = read_file(e.path().string() + "/environ");
    const auto at = env.find("SLURMD_NODENAME=");
    if (at == std::string::npos) continue;
    nodes.insert(env.substr(at + 16, env.find('\0', at) - at - 16));
  }
  return nodes;
}

// `chorus serve` started in `dir` with `args`, stopped (SIGTERM, then waited for) at the end of
// the case whatever happened: its stop cancels every pilot it submitted.
class ServeProcess {
 public:
  ServeProcess(const std::vector<std::string>& args, const std::string& dir)
      : args_(args), dir_(dir) {
    start();
  }
  // Starts it again (after stop()); its output goes on in bg.err.
  void start() {
    std::vector<std::string> argv{chorus_bin(), "serve"};
    argv.insert(argv.end(), args_.begin(), args_.end());
    pid_ = start_process(argv, dir_);
  }
  ~ServeProcess() { (void)stop(); }
  int stop(int signal_number = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal_number);
    const int code = wait_process(pid_);
    pid_ = -1;
    return code;
  }

 private:
  std::vector<std::string> args_;
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("Slurm.Serve.AnInstanceInsideSbatchServesEveryNodeOfItsAllocation") {
  SlurmCluster::get();
  TempDir dir;
  const unsigned job =
      submit_job({"-N", "2", "--exclusive"}, chorus_bin() + " serve --state st", dir.path());
  JobGuard guard{job};
  REQUIRE_MESSAGE(
      eventually(
          [&] { return read_file(dir / "job.out").find("listening on") != std::string::npos; }, 90),
      read_file(dir / "job.out"));
  CHECK(read_file(dir / "job.out").find("one agent on each of the allocation's 2 nodes") !=
        std::string::npos);

  std::string tasks;
  for (int i = 0; i < 8; ++i) {
    const std::string n = "t" + std::to_string(i);
    tasks +=
        "  - name: " + n + "\n    command: 'echo $SLURMD_NODENAME > " + n + ".node; sleep 1'\n";
  }
  write_file(dir / "wf.yaml", "name: spread\ntasks:\n" + tasks);
  // From outside the job: the state folder's socket names the instance.
  auto sub = run_chorus({"submit", "wf.yaml", "--state", dir / "st"}, dir.path());
  REQUIRE_MESSAGE(sub.exit_code == 0, sub.err);
  std::string run = sub.out;
  while (!run.empty() && run.back() == '\n') run.pop_back();
  auto watch = run_chorus(
      {"status", run, "--watch", "--interval", "0.5", "--json", "--state", dir / "st"}, dir.path());
  INFO("job output:\n", read_file(dir / "job.out"));
  CHECK_MESSAGE(watch.exit_code == 0, watch.err);
  std::map<std::string, int> per_node;
  for (int i = 0; i < 8; ++i) {
    auto lines = read_lines(dir / ("t" + std::to_string(i) + ".node"));
    REQUIRE(lines.size() == 1);
    per_node[lines[0]] += 1;
  }
  CHECK(per_node.size() == 2);  // both nodes of the allocation ran tasks
  CHECK(agent_nodes(dir.path()) ==
        std::set<std::string>{per_node.begin()->first, per_node.rbegin()->first});

  // scancel: the instance stops (SIGTERM) and its agents exit with it.
  (void)run_process({"scancel", std::to_string(job)}, "/");
  const std::string state = wait_batch_job(job);
  CHECK(state == "CANCELLED");
  CHECK(eventually([&] { return agent_nodes(dir.path()).empty(); }, 30));
}

namespace {

// Pilot jobs of the instance in Slurm's queue: "state" per RUNNING/PENDING job named
// chorus-pilot*.
std::vector<std::string> pilot_jobs() {
  auto r = run_process({"squeue", "-h", "-o", "%j %T"}, "/");
  std::vector<std::string> jobs;
  std::size_t from = 0;
  while (from < r.out.size()) {
    std::size_t end = r.out.find('\n', from);
    if (end == std::string::npos) end = r.out.size();
    const std::string line = r.out.substr(from, end - from);
    if (line.rfind("chorus-pilot", 0) == 0) jobs.push_back(line);
    from = end + 1;
  }
  return jobs;
}

// An instance with automatic allocation (`allocation` is the serve.yaml line) in `dir`, serving
// state folder st; at the end its stop cancels its pilots, and any left are cancelled by name.
class PilotsInstance {
 public:
  PilotsInstance(const TempDir& dir, const std::string& allocation)
      : dir_(dir.path()), serve_(start(dir, allocation), dir.path()) {
    REQUIRE_MESSAGE(eventually([&] { return log().find("listening on") != std::string::npos; }),
                    log());
  }
  ~PilotsInstance() {
    (void)serve_.stop();
    for (const char* n : {"chorus-pilot0", "chorus-pilot1"}) {
      (void)run_process({"scancel", "--name", n}, "/");
    }
  }
  std::string log() const { return read_file(dir_ + "/bg.err"); }
  int stop(int signal_number = SIGTERM) { return serve_.stop(signal_number); }
  // After stop(): the same instance again (bg.err starts anew); waits until it listens.
  void restart() {
    serve_.start();
    REQUIRE_MESSAGE(eventually([&] { return log().find("listening on") != std::string::npos; }),
                    log());
  }
  // Submits `workflow` (in dir) and returns the run id.
  std::string submit(const std::string& workflow) {
    auto sub = run_chorus({"submit", workflow, "--state", "st"}, dir_);
    REQUIRE_MESSAGE(sub.exit_code == 0, sub.err);
    std::string run = sub.out;
    while (!run.empty() && run.back() == '\n') run.pop_back();
    return run;
  }
  // The run's status word ("" when it cannot be read).
  std::string status(const std::string& run) const {
    auto r = run_chorus({"status", run, "--json", "--state", "st"}, dir_);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() ? j.value("status", "") : "";
  }
  // Waits (bounded) for the run to end, calling `each` on every poll; its final status.
  std::string wait_ended(const std::string& run, const std::function<void()>& each = {}) {
    std::string s;
    eventually(
        [&] {
          if (each) each();
          s = status(run);
          return !s.empty() && s != "running";
        },
        120);
    return s;
  }

 private:
  static std::vector<std::string> start(const TempDir& dir, const std::string& allocation) {
    write_file(dir / "serve.yaml", allocation + "\n");
    return {"--state", "st", "--config", "serve.yaml"};
  }
  std::string dir_;
  ServeProcess serve_;
};

}  // namespace

TEST_CASE("Slurm.Serve.AutoAllocationGrowsToTwoPilotsUnderLoadAndShrinksToZeroWhenIdle") {
  SlurmCluster::get();
  TempDir dir;
  PilotsInstance serve(
      dir, "allocation: {slurm: {max_jobs: 2, nodes: 1, walltime: 5m, idle_timeout: 4s}}");
  CHECK(pilot_jobs().empty());  // nothing waits: no pilot

  // Six tasks that each take a whole node (the test nodes have 4 CPUs): one pilot cannot hold
  // them, so a second one comes while the queue stays non-empty.
  write_file(dir / "wf.yaml",
             "name: load\ntasks:\n  - name: t\n    foreach: {i: \"range(0, 6)\"}\n    cores: 4\n"
             "    command: \"echo $SLURMD_NODENAME > t{i}.node; sleep 3\"\n");
  const std::string run = serve.submit("wf.yaml");
  std::size_t most_running = 0;
  const std::string status = serve.wait_ended(run, [&] {
    std::size_t running = 0;
    for (const std::string& j : pilot_jobs()) running += j.find("RUNNING") != std::string::npos;
    most_running = std::max(most_running, running);
  });
  INFO("instance log:\n", serve.log());
  CHECK(status == "succeeded");
  CHECK(most_running == 2);
  std::set<std::string> nodes;
  for (int i = 0; i < 6; ++i) {
    auto lines = read_lines(dir / ("t" + std::to_string(i) + ".node"));
    REQUIRE(lines.size() == 1);
    nodes.insert(lines[0]);
  }
  CHECK(nodes.size() == 2);  // both pilots ran tasks
  // Idle: both pilots are released.
  CHECK(eventually([] { return pilot_jobs().empty(); }, 60));
  CHECK(serve.log().find("released") != std::string::npos);
  CHECK(serve.stop() == 0);
}

TEST_CASE("Slurm.Serve.APilotLostMidTaskRequeuesItsTaskAndTasksOutlastingPilotsAreRefused") {
  SlurmCluster::get();
  TempDir dir;
  // Pilots of 2 minutes: a task whose timeout is 5 minutes could never go on one: refused.
  PilotsInstance serve(
      dir, "allocation: {slurm: {max_jobs: 2, nodes: 1, walltime: 2m, idle_timeout: 30s}}");
  write_file(dir / "long.yaml",
             "name: long\ntasks:\n  - name: l\n    timeout: 5m\n    command: \"touch long.ran\"\n");
  auto long_run = run_chorus({"submit", "long.yaml", "--state", "st"}, dir.path());
  CHECK(long_run.exit_code == 2);
  CHECK_MESSAGE(long_run.err.find("task 'l' has a timeout of 5m00s but this instance's pilot jobs "
                                  "live 2m00s") != std::string::npos,
                long_run.err);
  // An MPI task would run as mpirun on the instance's machine, not on a pilot: refused.
  write_file(dir / "mpi.yaml",
             "name: mpi\ntasks:\n  - name: m\n    kind: mpi\n    ranks: 2\n"
             "    command: \"touch mpi.ran\"\n");
  auto mpi_run = run_chorus({"submit", "mpi.yaml", "--state", "st"}, dir.path());
  CHECK(mpi_run.exit_code == 2);
  CHECK_MESSAGE(mpi_run.err.find("task 'm' is an MPI task, and this instance runs its work on "
                                 "pilot jobs") != std::string::npos,
                mpi_run.err);
  // One whole-node task (retries: 0) that records each start; its pilot is cancelled under it.
  write_file(dir / "wf.yaml",
             "name: lost\ntasks:\n  - name: t\n    cores: 4\n"
             "    command: \"echo $SLURM_JOB_ID >> starts; sleep 4\"\n");
  const std::string run = serve.submit("wf.yaml");
  REQUIRE_MESSAGE(eventually([&] { return file_exists(dir / "starts"); }, 90), serve.log());
  const std::string first_job = read_lines(dir / "starts").at(0);
  (void)run_process({"scancel", first_job}, "/");
  const std::string status = serve.wait_ended(run);
  INFO("instance log:\n", serve.log());
  CHECK(status == "succeeded");
  auto starts = read_lines(dir / "starts");
  REQUIRE(starts.size() == 2);  // lost once, run again on another pilot
  CHECK(starts[0] != starts[1]);
  CHECK(!file_exists(dir / "long.ran"));
  CHECK(!file_exists(dir / "mpi.ran"));
  CHECK(serve.stop() == 0);
}

TEST_CASE("Slurm.Serve.AKilledInstanceRestartsCancelsItsOldPilotsAndNoTaskRunsTwice") {
  SlurmCluster::get();
  TempDir dir;
  PilotsInstance serve(
      dir, "allocation: {slurm: {max_jobs: 2, nodes: 1, walltime: 5m, idle_timeout: 5s}}");
  // a -> b (killed with the instance mid-run) -> c; each counts its ends.
  write_file(dir / "wf.yaml", R"Y(name: chain
tasks:
  - name: a
    command: "echo a >> a.count"
  - name: b
    command: "echo start >> b.starts; sleep 4; echo done >> b.count"
    after: [a]
  - name: c
    command: "echo c >> c.count"
    after: [b]
)Y");
  const std::string run = serve.submit("wf.yaml");
  REQUIRE_MESSAGE(eventually([&] { return file_exists(dir / "b.starts"); }, 90), serve.log());
  CHECK(serve.stop(SIGKILL) == 128 + SIGKILL);
  CHECK(pilot_jobs().size() == 1);  // the killed instance's pilot lives on
  serve.restart();
  const std::string status = serve.wait_ended(run);
  INFO("instance log:\n", serve.log());
  CHECK(status == "succeeded");
  CHECK(serve.log().find("cancelled 1 pilot job(s) of an earlier instance") != std::string::npos);
  CHECK(read_lines(dir / "a.count").size() == 1);
  CHECK(read_lines(dir / "b.count").size() == 1);
  CHECK(read_lines(dir / "b.starts").size() == 2);  // killed once mid-run, run again
  CHECK(read_lines(dir / "c.count").size() == 1);
  CHECK(serve.stop() == 0);
  CHECK(eventually([] { return pilot_jobs().empty(); }, 30));
}
