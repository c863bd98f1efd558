// `chorus launch --no-agents` inside a REAL Slurm allocation (tests/slurm/cluster.sh): tasks placed
// across the allocation's nodes, each run as an srun step on the node chosen; an MPI task via srun
// --mpi=pmix.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "adapters/mpi/mpi_command.hpp"
#include "adapters/slurm/srun_launcher.hpp"
#include "runtime/store/state_store.hpp"
#include "support/process.hpp"
#include "support/slurm_cluster.hpp"

using namespace chorus::test;

namespace {

using Cluster = SlurmCluster;

// sbatch's job id ("Submitted batch job 12"), 0 if none.
unsigned job_id_of(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(Submitted batch job (\d+))"))) return 0;
  return static_cast<unsigned>(std::stoul(m[1]));
}

// The job's state from squeue ("" once Slurm forgot it; MinJobAge keeps it 300 s).
std::string squeue_state(unsigned job) {
  auto r = run_process({"squeue", "-h", "-t", "all", "-j", std::to_string(job), "-o", "%T"}, "/");
  std::string s = r.out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

TEST_CASE("Slurm.Launch.TasksRunAsStepsOnEveryNodeOfTheAllocation") {
  Cluster::get();
  TempDir dir;
  std::string tasks;
  for (int i = 0; i < 8; ++i) {
    tasks += "  - name: t" + std::to_string(i) +
             "\n    cores: 2\n    command: 'sleep 1; echo \"$SLURMD_NODENAME\" > t" +
             std::to_string(i) + ".node'\n";
  }
  tasks += "  - name: hello\n    kind: mpi\n    ranks: 2\n    command: [\"" + binary_dir() +
           "/tests/mpi_hello\"]\n";
  // What an MPI step's environment holds on these virtual nodes of one host: chorus's loopback
  // settings, except where the task's own env says else (127.0.0.0/8 is lo, as Open MPI reads it).
  tasks +=
      "  - name: ompi\n    kind: mpi\n    ranks: 1\n"
      "    env: {OMPI_MCA_oob_tcp_if_include: 127.0.0.0/8}\n"
      "    command: 'echo btl=$OMPI_MCA_btl oob=$OMPI_MCA_oob_tcp_if_include'\n";
  write_file(dir / "wf.yaml", "name: spread\ntasks:\n" + tasks);

  // --exclusive: a plain -N 2 gets one CPU per node, where a 2-core task can never run.
  auto sub =
      run_process({"sbatch", "-N", "2", "--exclusive", "-t", "5:00", "-o", "job.out", "--wrap",
                   chorus_bin() + " launch wf.yaml --no-agents --state " + (dir / "st")},
                  dir.path());
  INFO(sub.out, sub.err);
  unsigned job = job_id_of(sub.out);
  REQUIRE(job > 0);
  std::string state;
  bool ended = eventually(
      [&] {
        state = squeue_state(job);
        return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" ||
               state == "TIMEOUT" || state == "NODE_FAIL";
      },
      120);
  INFO("state: ", state, "\njob output:\n", read_file(dir / "job.out"));
  REQUIRE(ended);
  CHECK(state == "COMPLETED");

  // Every task ran on a node of the allocation, and both nodes were used.
  std::set<std::string> nodes;
  for (int i = 0; i < 8; ++i) {
    auto lines = read_lines(dir / ("t" + std::to_string(i) + ".node"));
    REQUIRE(lines.size() == 1);
    CHECK(std::regex_match(lines[0], std::regex("n[1-4]")));
    nodes.insert(lines[0]);
  }
  CHECK(nodes.size() == 2);

  // The journal: the run succeeded, on the allocation's two nodes.
  auto store = chorus::open_sqlite_store(dir / "st/chorus.db");
  REQUIRE(store.ok());
  auto run = (*store)->latest_run_of(std::filesystem::path(dir / "wf.yaml").string());
  REQUIRE(run.ok());
  CHECK(run->status == chorus::RunStatus::succeeded);
  REQUIRE(run->nodes.size() == 2);
  for (const auto& n : run->nodes) CHECK(nodes.count(n.name) == 1);

  // The MPI task's two ranks formed one world of size 2.
  auto logs =
      run_process({chorus_bin(), "logs", "--state", dir / "st", run->id, "hello"}, dir.path());
  INFO(logs.out, logs.err);
  CHECK(logs.out.find("rank 0 of 2") != std::string::npos);
  CHECK(logs.out.find("rank 1 of 2") != std::string::npos);

  auto ompi =
      run_process({chorus_bin(), "logs", "--state", dir / "st", run->id, "ompi"}, dir.path());
  INFO(ompi.out, ompi.err);
  CHECK(ompi.out.find("btl=self,tcp oob=127.0.0.0/8\n") != std::string::npos);
}

TEST_CASE("Slurm.Launch.OutsideAnAllocationExits2") {
  TempDir dir;
  write_file(dir / "wf.yaml", "name: x\ntasks:\n  - name: a\n    command: 'true'\n");
  unsetenv("SLURM_JOB_ID");
  auto r = run_chorus({"launch", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("chorus launch runs inside a Slurm allocation (SLURM_JOB_ID is not set); use "
                   "chorus run here or chorus submit --slurm") != std::string::npos);
  CHECK(!file_exists(dir / ".chorus/chorus.db"));
}

TEST_CASE("Slurm.Launch.StepCommandsNameTheNodeAndCores") {
  chorus::TaskSpec spec;
  spec.name = "t";
  spec.per_rank.cores = 2;
  spec.cmd.shell = "echo hi";
  auto argv = chorus::srun_step_argv(spec, "n3");
  std::vector<std::string> want{
      "srun",          "--nodes=1",   "--ntasks=1", "--cpus-per-task=2",
      "--nodelist=n3", "--exclusive", "--quiet",    "--kill-on-bad-exit=1",
      "--job-name=t",  "/bin/sh",     "-c",         "echo hi"};
  CHECK(argv == want);

  // MPI: every rank on the node placement chose.
  spec.kind = chorus::TaskKind::mpi;
  spec.ranks = 2;
  spec.per_rank.cores = 1;
  spec.cmd.shell.clear();
  spec.cmd.argv = {"./hello", "a b"};
  chorus::SrunMpiCommand mpi;
  std::vector<std::string> mpi_want{"srun",         "--mpi=pmix",        "--nodes=1",
                                    "--ntasks=2",   "--cpus-per-task=1", "--nodelist=n2",
                                    "--exclusive",  "--quiet",           "--kill-on-bad-exit=1",
                                    "--job-name=t", "./hello",           "a b"};
  CHECK(mpi.argv(spec, {{"n2", 2}}) == mpi_want);

  // Across nodes: the node list names each rank's node, in rank order, for Slurm's arbitrary
  // distribution; --mem is per node, so the fullest node's share.
  spec.ranks = 5;
  spec.per_rank.memory_mb = 100;
  std::vector<std::string> spread_want{"srun",
                                       "--mpi=pmix",
                                       "--nodes=2",
                                       "--ntasks=5",
                                       "--cpus-per-task=1",
                                       "--nodelist=n2,n2,n2,n4,n4",
                                       "--distribution=arbitrary",
                                       "--exclusive",
                                       "--quiet",
                                       "--kill-on-bad-exit=1",
                                       "--job-name=t",
                                       "--mem=300M",
                                       "./hello",
                                       "a b"};
  CHECK(mpi.argv(spec, {{"n2", 3}, {"n4", 2}}) == spread_want);
  // Separate hosts (a real cluster): Open MPI and the site choose the transports.
  auto names = [](const chorus::KeyValues& env) {
    std::vector<std::string> out;
    for (const auto& [k, v] : env) {
      if (k.rfind("OMPI_MCA_", 0) == 0) out.push_back(k + "=" + v);
    }
    return out;
  };
  CHECK(names(mpi.env()).empty());
  // Virtual nodes of one host: TCP over loopback, unless this process's environment says else.
  chorus::SrunMpiCommand one_host("srun", true);
  unsetenv("OMPI_MCA_btl");
  unsetenv("OMPI_MCA_btl_tcp_if_include");
  unsetenv("OMPI_MCA_oob_tcp_if_include");
  CHECK(names(one_host.env()) == std::vector<std::string>{"OMPI_MCA_btl=self,tcp",
                                                          "OMPI_MCA_btl_tcp_if_include=lo",
                                                          "OMPI_MCA_oob_tcp_if_include=lo"});
  setenv("OMPI_MCA_btl", "self,vader,tcp", 1);
  CHECK(names(one_host.env()) == std::vector<std::string>{"OMPI_MCA_btl_tcp_if_include=lo",
                                                          "OMPI_MCA_oob_tcp_if_include=lo"});
  unsetenv("OMPI_MCA_btl");
}
