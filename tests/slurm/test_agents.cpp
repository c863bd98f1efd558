// `chorus launch` with agents inside a REAL Slurm allocation (tests/slurm/cluster.sh): one agent
// per node from ONE srun step, tasks landing on every node, a node set down and an agent killed
// (tasks requeued on the survivors), a coordinator SIGKILLed and resumed.
#include <doctest/doctest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "runtime/store/state_store.hpp"
#include "support/slurm_cluster.hpp"
#include "support/slurm_jobs.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

// The steps of a running job: "name" per line (squeue -s).
std::vector<std::string> step_names(unsigned job) {
  auto r = run_process({"squeue", "-h", "-s", "-j", std::to_string(job), "-o", "%j"}, "/");
  std::vector<std::string> names;
  std::string line;
  for (char c : r.out) {
    if (c == '\n') {
      if (!line.empty()) names.push_back(line);
      line.clear();
    } else if (c != ' ') {
      line += c;
    }
  }
  return names;
}

// Pids of `chorus agent` processes whose key folder lies under `dir`.
std::vector<pid_t> agents_under(const std::string& dir, const std::string& node = "") {
  std::vector<pid_t> pids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_file(e.path().string() + "/cmdline");
    for (char& c : cmd) c = c == '\0' ? ' ' : c;
    if (cmd.find(" agent --connect ") == std::string::npos || cmd.find(dir) == std::string::npos) {
      continue;
    }
    if (!node.empty()) {
      std::string env = read_file(e.path().string() + "/environ");
      if (env.find(std::string("SLURMD_NODENAME=") + node + '\0') == std::string::npos) continue;
    }
    pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

std::string chorus_launch(const std::string& extra) {
  return chorus_bin() + " launch wf.yaml --state st --agent-timeout 2s" + extra;
}

}  // namespace

TEST_CASE("Slurm.Agents.TasksLandOnEveryNodeThroughOneStep") {
  SlurmCluster::get();
  TempDir dir;
  std::string tasks;
  for (int i = 0; i < 16; ++i) {
    std::string n = "t" + std::to_string(i);
    tasks += "  - name: " + n + "\n    command: 'echo $SLURMD_NODENAME > " + n +
             ".node; touch started." + n + "; sleep 2'\n";
  }
  tasks += "  - name: hello\n    kind: mpi\n    ranks: 2\n    after: [t0]\n    command: [\"" +
           binary_dir() + "/tests/mpi_hello\"]\n";
  write_file(dir / "wf.yaml", "name: agents\ntasks:\n" + tasks);
  unsigned job = submit_job({"-N", "4", "--exclusive"}, chorus_launch(""), dir.path());

  // While the 16 tasks run, the job has the agents' step and no step per task.
  bool all_started = eventually(
      [&] {
        for (int i = 0; i < 16; ++i) {
          if (!file_exists(dir / ("started.t" + std::to_string(i)))) return false;
        }
        return true;
      },
      60);
  auto steps = step_names(job);
  INFO("steps: ", steps.size(), "\njob output:\n", read_file(dir / "job.out"));
  REQUIRE(all_started);
  CHECK(std::count(steps.begin(), steps.end(), "chorus-agents") == 1);
  for (const auto& s : steps) CHECK(s.rfind("t", 0) != 0);  // no task-named srun steps

  std::string state = wait_batch_job(job);
  INFO("state: ", state, "\njob output:\n", read_file(dir / "job.out"));
  CHECK(state == "COMPLETED");
  std::map<std::string, int> per_node;
  for (int i = 0; i < 16; ++i) {
    auto lines = read_lines(dir / ("t" + std::to_string(i) + ".node"));
    REQUIRE(lines.size() == 1);
    per_node[lines[0]] += 1;
  }
  CHECK(per_node.size() == 4);  // every node of the allocation ran tasks

  auto store = chorus::open_sqlite_store(dir / "st/chorus.db");
  REQUIRE(store.ok());
  auto run = (*store)->latest_run_of(std::filesystem::path(dir / "wf.yaml").string());
  REQUIRE(run.ok());
  CHECK(run->status == chorus::RunStatus::succeeded);
  auto logs =
      run_process({chorus_bin(), "logs", "--state", dir / "st", run->id, "hello"}, dir.path());
  CHECK(logs.out.find("rank 1 of 2") != std::string::npos);  // MPI still via srun --mpi=pmix
  CHECK(agents_under(dir.path()).empty());                   // the agents exited with the run
}

TEST_CASE("Slurm.Agents.NodeDownAndKilledAgentRequeueOnSurvivors") {
  SlurmCluster::get();
  TempDir dir;
  // Two 2-core tasks per node; each records where it ran, then works 4 s.
  std::string tasks;
  for (int i = 0; i < 8; ++i) {
    std::string n = "t" + std::to_string(i);
    tasks += "  - name: " + n + "\n    cores: 2\n    retries: 2\n    command: 'echo " +
             "$SLURMD_NODENAME >> " + n + ".nodes; sleep 4'\n";
  }
  write_file(dir / "wf.yaml", "name: faults\ntasks:\n" + tasks);
  // --no-kill: the job outlives a failed node.
  unsigned job = submit_job({"-N", "4", "--exclusive", "--no-kill"}, chorus_launch(""), dir.path());
  std::vector<std::string> nodes;
  bool running = eventually(
      [&] {
        nodes.clear();
        for (int i = 0; i < 8; ++i) {
          auto l = read_lines(dir / ("t" + std::to_string(i) + ".nodes"));
          if (l.empty()) return false;
          nodes.push_back(l[0]);
        }
        return true;
      },
      60);
  INFO("job output:\n", read_file(dir / "job.out"));
  REQUIRE(running);
  // n3 goes down in Slurm; the agent of n2 is SIGKILLed.
  auto down = run_process(
      {"scontrol", "update", "nodename=n3", "state=down", "reason=chorus-agent-test"}, "/");
  CHECK(down.exit_code == 0);
  auto victims = agents_under(dir.path(), "n2");
  CHECK(victims.size() == 1);
  for (pid_t p : victims) ::kill(p, SIGKILL);

  std::string state = wait_batch_job(job);
  run_process({"scontrol", "update", "nodename=n3", "state=resume"}, "/");
  INFO("state: ", state, "\njob output:\n", read_file(dir / "job.out"));
  CHECK(state == "COMPLETED");
  int moved = 0;
  for (int i = 0; i < 8; ++i) {
    auto l = read_lines(dir / ("t" + std::to_string(i) + ".nodes"));
    REQUIRE(!l.empty());
    if (l[0] == "n2" || l[0] == "n3") {
      // Lost with its node: run again until it ran on a survivor. A task requeued from n2 may
      // first land on n3 if n3's agent is not yet declared lost, and be lost there once more.
      REQUIRE(l.size() >= 2);
      CHECK((l.back() == "n1" || l.back() == "n4"));
      for (std::size_t k = 0; k + 1 < l.size(); ++k) CHECK((l[k] == "n2" || l[k] == "n3"));
      ++moved;
    } else {
      CHECK(l.size() == 1);
    }
  }
  CHECK(moved == 4);
  CHECK(read_file(dir / "job.out").find("lost: the agent on node n3") != std::string::npos);
}

TEST_CASE("Slurm.Agents.CoordinatorKilledThenResumedSkipsFinishedTasks") {
  SlurmCluster::get();
  TempDir dir;
  std::string tasks;
  for (int i = 0; i < 10; ++i) {
    std::string n = "t" + std::to_string(i);
    tasks += "  - name: " + n + "\n    command: 'echo run >> " + n + ".runs; sleep " +
             std::to_string(i < 4 ? 0 : 6) + "; touch done." + n + "'\n";
  }
  write_file(dir / "wf.yaml", "name: resume\ntasks:\n" + tasks);
  // Kill the coordinator once the 4 quick tasks are journaled as done; check that its agents
  // leave (2 s agent timeout), then resume.
  const std::string script =
      chorus_launch(" > first.log 2>&1 &") +
      " pid=$!; for i in $(seq 300); do "
      "[ \"$(" +
      chorus_bin() +
      " status --state st --json 2>/dev/null | grep -c '\"succeeded\": 4')\" "
      "= 1 ] && break; sleep 0.1; done; kill -9 $pid; sleep 4; pgrep -f "
      "'agent --connect .* --keys " +
      dir.path() + "/st' | wc -l > agents_left; " + chorus_launch(" --resume");
  unsigned job = submit_job({"-N", "2", "--exclusive"}, script, dir.path());
  std::string state = wait_batch_job(job, 120);
  INFO("state: ", state, "\nfirst session:\n", read_file(dir / "first.log"), "\njob output:\n",
       read_file(dir / "job.out"));
  CHECK(state == "COMPLETED");
  CHECK(read_lines(dir / "agents_left") == std::vector<std::string>{"0"});
  for (int i = 0; i < 10; ++i) {
    std::string n = "t" + std::to_string(i);
    CHECK(file_exists(dir / ("done." + n)));
    auto runs = read_lines(dir / (n + ".runs"));
    if (i < 4) {
      CHECK(runs.size() == 1);  // finished before the kill: not run again
    } else {
      CHECK(runs.size() == 2);  // cut short by the kill: run again
    }
  }
  CHECK(read_file(dir / "job.out").find("(4 from earlier sessions)") != std::string::npos);
}
