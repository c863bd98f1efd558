// `chorus submit --slurm`, `slurm-status`, `slurm-cancel` against a REAL Slurm 22.05 cluster of
// virtual nodes on localhost (tests/slurm/cluster.sh). No fake sbatch, no mocked libslurm.
//
// Each ctest case is its own process: the first use of the cluster starts it (cluster.sh start is
// idempotent); a process that started it stops it when it exits, so CI leaves nothing behind,
// while a cluster someone started by hand is used and left running.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "adapters/slurm/allocation.hpp"
#include "adapters/slurm/slurm_client.hpp"
#include "support/process.hpp"
#include "support/slurm_cluster.hpp"

using namespace chorus::test;

namespace {

using Cluster = SlurmCluster;

struct Submitted {
  ProcessResult result;
  unsigned job_id = 0;
};

Submitted submit(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> all{"submit", "--slurm"};
  all.insert(all.end(), args.begin(), args.end());
  Submitted s;
  s.result = run_chorus(all, cwd);
  std::smatch m;
  if (std::regex_search(s.result.out, m, std::regex(R"(Submitted batch job (\d+))"))) {
    s.job_id = static_cast<unsigned>(std::stoul(m[1]));
  }
  return s;
}

// The state `chorus slurm-status --json` reports for one job ("" if it could not say).
std::string job_state(unsigned job_id, const std::string& cwd) {
  auto r = run_chorus({"slurm-status", "--json", std::to_string(job_id)}, cwd);
  if (r.exit_code != 0) return "";
  auto line = nlohmann::json::parse(r.out, nullptr, false);
  if (line.is_discarded() || !line.contains("state")) return "";
  return line["state"];
}

int free_local_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace

TEST_CASE("Slurm.Submit.JobCompletesOnAVirtualNode") {
  Cluster::get();
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: where
tasks:
  - name: where
    command: >-
      echo "node=$SLURMD_NODENAME" > where.txt &&
      printf '%s\n' "$SLURM_JOB_ID" "$SLURM_JOB_NODELIST" "$SLURM_JOB_CPUS_PER_NODE" > alloc.txt
)Y");
  auto s = submit({"-N", "2", "-t", "5:00", "-p", "debug", "--job-name", "chorus-test", "wf.yaml"},
                  dir.path());
  INFO(s.result.out, s.result.err);
  REQUIRE(s.result.exit_code == 0);
  REQUIRE(s.job_id > 0);

  std::string state;
  bool done = eventually(
      [&] {
        state = job_state(s.job_id, dir.path());
        return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED";
      },
      60);
  INFO("last state: ", state, "\njob output:\n",
       read_file(dir / ("slurm-" + std::to_string(s.job_id) + ".out")));
  REQUIRE(done);
  CHECK(state == "COMPLETED");

  // What the workflow wrote on the node, and the run's summary in the job's output file.
  CHECK(std::regex_match(read_file(dir / "where.txt"), std::regex("node=n[1-4]\n")));
  CHECK(read_file(dir / ("slurm-" + std::to_string(s.job_id) + ".out")).find("succeeded") !=
        std::string::npos);

  // The submission is recorded, and slurm-status with no ids reports it from the record.
  auto doc = nlohmann::json::parse(read_file(dir / ".chorus/submissions.json"));
  REQUIRE(doc["submissions"].size() == 1);
  CHECK(doc["submissions"][0]["job_id"] == s.job_id);
  CHECK(doc["submissions"][0]["workflow"] == dir / "wf.yaml");
  CHECK(doc["submissions"][0]["output"] == dir / ("slurm-" + std::to_string(s.job_id) + ".out"));
  auto all = run_chorus({"slurm-status"}, dir.path());
  CHECK(all.exit_code == 0);
  CHECK(all.out.find(std::to_string(s.job_id)) != std::string::npos);
  CHECK(all.out.find("COMPLETED") != std::string::npos);

  // The allocation as Slurm really wrote it inside the job parses into 2 nodes of the cluster.
  auto lines = read_lines(dir / "alloc.txt");
  REQUIRE(lines.size() == 3);
  std::map<std::string, std::string> env{{"SLURM_JOB_ID", lines[0]},
                                         {"SLURM_JOB_NODELIST", lines[1]},
                                         {"SLURM_JOB_CPUS_PER_NODE", lines[2]}};
  auto alloc = chorus::read_slurm_allocation([&](const std::string& name) {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  INFO(lines[1], " ", lines[2]);
  REQUIRE(alloc.ok());
  CHECK(alloc->job_id == std::to_string(s.job_id));
  REQUIRE(alloc->nodes.size() == 2);
  for (const auto& n : alloc->nodes) {
    CHECK(std::regex_match(n.name, std::regex("n[1-4]")));
    CHECK(n.capacity.cores >= 1);
  }
}

// Node addresses from the controller: what chorus launch reads to tell virtual nodes of one host
// (Open MPI's transports, adapters/mpi/mpi_command.hpp) from separate hosts.
TEST_CASE("Slurm.Nodes.AddressesComeFromTheController") {
  Cluster::get();
  auto client = chorus::SlurmClient::open();
  REQUIRE(client.ok());
  const std::vector<std::string> names{"n1", "n4", "no-such-node"};
  auto addresses = (*client)->node_addresses(names);
  REQUIRE(addresses.ok());
  CHECK(*addresses == std::vector<std::string>{"127.0.0.1", "127.0.0.1", ""});
}

TEST_CASE("Slurm.Cancel.SleepingJobEndsCancelled") {
  Cluster::get();
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: sleeper
tasks:
  - name: nap
    command: "echo $$ > pid.txt; exec sleep 300"
)Y");
  auto s = submit({"-N", "1", "wf.yaml"}, dir.path());
  INFO(s.result.out, s.result.err);
  REQUIRE(s.job_id > 0);
  REQUIRE(eventually([&] { return !read_lines(dir / "pid.txt").empty(); }, 60));
  pid_t sleeper = static_cast<pid_t>(std::stol(read_lines(dir / "pid.txt")[0]));
  REQUIRE(process_alive(sleeper));
  CHECK(job_state(s.job_id, dir.path()) == "RUNNING");

  auto c = run_chorus({"slurm-cancel", std::to_string(s.job_id)}, dir.path());
  INFO(c.err);
  CHECK(c.exit_code == 0);
  std::string state;
  CHECK(eventually([&] { return (state = job_state(s.job_id, dir.path())) == "CANCELLED"; }, 30));
  INFO("last state: ", state);
  // The job's steps die with it: the workflow's task (same host) is gone.
  CHECK(eventually([&] { return !process_alive(sleeper); }, 30));
  // Cancelling a finished job again is not an error; an unknown id is.
  CHECK(run_chorus({"slurm-cancel", std::to_string(s.job_id)}, dir.path()).exit_code == 0);
  auto unknown = run_chorus({"slurm-cancel", "999999"}, dir.path());
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("Invalid job id") != std::string::npos);
}

TEST_CASE("Slurm.Submit.BadPartitionGivesSlurmErrorAndExit2") {
  Cluster::get();
  TempDir dir;
  write_file(dir / "wf.yaml", "name: p\ntasks:\n  - name: a\n    command: [/bin/true]\n");
  auto s = submit({"-p", "no-such-partition", "wf.yaml"}, dir.path());
  INFO(s.result.err);
  CHECK(s.result.exit_code == 2);
  CHECK(s.result.err.find("Invalid partition name specified") != std::string::npos);
  CHECK(s.job_id == 0);
  CHECK_FALSE(file_exists(dir / ".chorus/submissions.json"));
}

TEST_CASE("Slurm.Errors.NoControllerIsClearAndBounded") {
  const std::string& conf = Cluster::get().conf();  // munge up; the configuration to copy
  TempDir dir;
  write_file(dir / "wf.yaml", "name: p\ntasks:\n  - name: a\n    command: [/bin/true]\n");
  // The cluster's configuration with a controller port nobody listens on.
  std::string text = read_file(conf);
  text = std::regex_replace(text, std::regex("SlurmctldPort=\\d+"),
                            "SlurmctldPort=" + std::to_string(free_local_port()));
  write_file(dir / "dead.conf", text);

  pid_t pid = start_process(
      {"env", "SLURM_CONF=" + (dir / "dead.conf"), chorus_bin(), "submit", "--slurm", "wf.yaml"},
      dir.path());
  bool ended = eventually([&] { return !process_alive(pid); }, 60);
  if (!ended) kill(pid, SIGKILL);
  int code = wait_process(pid);
  std::string err = read_file(dir / "bg.err");
  INFO(err);
  REQUIRE(ended);
  CHECK(code == 3);
  CHECK(err.find("Unable to contact slurm controller") != std::string::npos);
  CHECK(err.find("dead.conf") != std::string::npos);

  // No configuration at all: refused before libslurm (which would exit the process) sees it.
  auto r = run_process({chorus_bin(), "slurm-status", "7"}, dir.path(),
                       {{"SLURM_CONF", dir / "missing.conf"}});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("no Slurm configuration at " + (dir / "missing.conf")) != std::string::npos);
}
