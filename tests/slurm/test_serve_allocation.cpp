// `chorus serve` inside a REAL Slurm allocation (tests/slurm/cluster.sh): the instance serves
// the allocation's nodes through one agent per node; a submission from outside the job (through
// the state folder's socket) runs on every node; scancel ends the instance and its agents.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
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

}  // namespace

TEST_CASE("Slurm.Serve.AutoAllocationGrowsToTwoPilotsUnderLoadAndShrinksToZeroWhenIdle") {
  SlurmCluster::get();
  TempDir dir;
  struct PilotGuard {
    ~PilotGuard() {
      for (const char* n : {"chorus-pilot0", "chorus-pilot1"}) {
        (void)run_process({"scancel", "--name", n}, "/");
      }
    }
  } pilots_guard;
  write_file(dir / "serve.yaml",
             "allocation: {slurm: {max_jobs: 2, nodes: 1, walltime: 5m, idle_timeout: 4s}}\n");
  const pid_t serve =
      start_process({chorus_bin(), "serve", "--state", "st", "--config", "serve.yaml"}, dir.path());
  REQUIRE_MESSAGE(eventually([&] {
                    return read_file(dir / "bg.err").find("listening on") != std::string::npos;
                  }),
                  read_file(dir / "bg.err"));
  CHECK(pilot_jobs().empty());  // nothing waits: no pilot

  // Six tasks that each take a whole node (the test nodes have 4 CPUs): one pilot cannot hold
  // them, so a second one comes while the queue stays non-empty.
  write_file(dir / "wf.yaml",
             "name: load\ntasks:\n  - name: t\n    foreach: {i: \"range(0, 6)\"}\n    cores: 4\n"
             "    command: \"echo $SLURMD_NODENAME > t{i}.node; sleep 3\"\n");
  auto sub = run_chorus({"submit", "wf.yaml", "--state", "st"}, dir.path());
  REQUIRE_MESSAGE(sub.exit_code == 0, sub.err);
  std::string run = sub.out;
  while (!run.empty() && run.back() == '\n') run.pop_back();
  std::size_t most_running = 0;
  std::string status;
  eventually(
      [&] {
        std::size_t running = 0;
        for (const std::string& j : pilot_jobs()) running += j.find("RUNNING") != std::string::npos;
        most_running = std::max(most_running, running);
        auto r = run_chorus({"status", run, "--json", "--state", "st"}, dir.path());
        auto j = nlohmann::json::parse(r.out, nullptr, false);
        status = j.is_object() ? j.value("status", "") : "";
        return status != "" && status != "running";
      },
      120);
  INFO("instance log:\n", read_file(dir / "bg.err"));
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
  CHECK(read_file(dir / "bg.err").find("released") != std::string::npos);
  ::kill(serve, SIGTERM);
  CHECK(wait_process(serve) == 0);
}
