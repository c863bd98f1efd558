// `chorus launch --node-logs` inside a REAL Slurm allocation: task output stays in each node's
// TmpFS folder (/tmp/slurm-tmp/nK here), `chorus logs` fetches it through the live coordinator,
// a failed task's output is collected into the run folder, and after the run `chorus logs` says
// on which node and where the rest stayed.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>

#include "support/slurm_cluster.hpp"
#include "support/slurm_jobs.hpp"
#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("Slurm.AgentsLogs.NodeLocalOutputIsFetchedLiveAndLocatedAfterTheRun") {
  SlurmCluster::get();
  TempDir dir;
  // A folder of this test's own in every node's TmpFS (%n: each agent expands its node name).
  const std::string tag = std::filesystem::path(dir.path()).filename().string();
  const std::string node_logs = "/tmp/slurm-tmp/%n/chorus-test-" + tag;
  write_file(dir / "wf.yaml", R"Y(name: nodelogs
tasks:
  - name: talk
    command: 'echo "hello from $SLURMD_NODENAME"; touch talk.started; while [ ! -f go ]; do sleep 0.1; done'
  - name: bad
    command: 'echo "bad out"; echo "bad on $SLURMD_NODENAME" >&2; exit 4'
)Y");
  unsigned job =
      submit_job({"-N", "2", "--exclusive"},
                 chorus_bin() + " launch wf.yaml --state st --node-logs " + node_logs, dir.path());
  bool started = eventually([&] { return file_exists(dir / "talk.started"); }, 60);
  INFO("job output:\n", read_file(dir / "job.out"));
  REQUIRE(started);

  // Live: through the coordinator's control socket and the agent of talk's node.
  auto live = run_process({chorus_bin(), "logs", "--state", "st", "latest", "talk"}, dir.path());
  INFO("live logs: ", live.out, live.err);
  CHECK(live.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(live.out, m, std::regex(R"(hello from (n\d))")));
  const std::string node = m[1];
  // The run folder has no copy: the bytes came from the node.
  auto logs_dir = std::filesystem::directory_iterator(dir / "st/runs")->path().string() + "/logs";
  CHECK_FALSE(file_exists(logs_dir + "/talk.1.out"));

  write_file(dir / "go", "");
  std::string state;
  state = wait_batch_job(job);
  // chorus launch exits 1: the workflow failed (bad). Its summary showed bad's stderr, which
  // only the collected copy in the run folder can give.
  CHECK(state == "FAILED");
  CHECK(read_file(dir / "job.out").find("stderr (last lines):\nbad on n") != std::string::npos);

  // The failure was collected into the run folder: shown after the agents are gone.
  auto bad = run_process({chorus_bin(), "logs", "--state", "st", "latest", "bad"}, dir.path());
  CHECK(bad.exit_code == 0);
  CHECK(bad.out == "bad out\n");
  CHECK(bad.err.find("bad on n") != std::string::npos);

  // talk succeeded: its output stayed on its node, and chorus logs says where.
  auto after = run_process({chorus_bin(), "logs", "--state", "st", "latest", "talk"}, dir.path());
  INFO("after: ", after.err);
  CHECK(after.exit_code == 3);
  CHECK(after.err.find("stayed on node " + node + " in /tmp/slurm-tmp/" + node + "/chorus-test-" +
                       tag + "/") != std::string::npos);
  CHECK(after.err.find("the run has ended") != std::string::npos);
  // ... and it is really there, in that node's TmpFS.
  std::string local;
  for (const auto& e :
       std::filesystem::directory_iterator("/tmp/slurm-tmp/" + node + "/chorus-test-" + tag)) {
    local = read_file(e.path().string() + "/talk.1.out");
  }
  CHECK(local == "hello from " + node + "\n");
  for (int k = 1; k <= 4; ++k) {
    std::error_code ec;
    std::filesystem::remove_all("/tmp/slurm-tmp/n" + std::to_string(k) + "/chorus-test-" + tag, ec);
  }
}
