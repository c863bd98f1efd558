// `quorum:` end to end: the real chorus binary, real processes. A repeat group of 3 rounds whose
// sweep of 6 sleeps of different lengths closes on the 4 fastest (static k = 4): the 2 slow ones
// are stopped (their processes gone, their output never written), `chorus status` shows them as
// dropped by quorum, the task after the sweep reads the round's record, and the run succeeds.
#include <doctest/doctest.h>

#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

const char* const kEnsemble = R"Y(name: quorum-sleeps
tasks:
  - repeat: ens
    max_rounds: 3
    until: {file: "quorum/ens/round-{round}.json", key: /used, below: 4}
    tasks:
      - name: sim
        foreach: {d: ["0.1", "0.2", "0.3", "0.4", "30", "40"]}
        command: "echo $$ > pids/{round}-{d}; sleep {d} && touch out/{round}-{d}"
        quorum: {policy: static, n: 6, k: 4}
      - name: merge
        after: [sim]
        command: "cp \"$CHORUS_QUORUM_FILE\" merged-{round}.json"
)Y";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool alive(const std::string& pid_file) {
  std::ifstream in(pid_file);
  long pid = 0;
  in >> pid;
  REQUIRE_MESSAGE(pid > 0, "no pid in " << pid_file);
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

TEST_CASE("Integration.QuorumWorkflow.RoundsCloseOnTheFastestAndDropTheRest") {
  TempDir dir;
  write_file(dir / "wf.yaml", kEnsemble);
  std::filesystem::create_directories(dir / "pids");
  std::filesystem::create_directories(dir / "out");
  // Cores for all six at once: every member starts, so the slow ones have processes to stop.
  auto r = run_chorus({"run", "--cores", "6", "wf.yaml"}, dir.path());
  INFO(r.out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (int round = 1; round <= 3; ++round) {
    const std::string R = std::to_string(round);
    for (const char* fast : {"0.1", "0.2", "0.3", "0.4"}) {
      CHECK(std::filesystem::exists(dir / ("out/" + R + "-" + fast)));
    }
    for (const char* slow : {"30", "40"}) {
      CHECK_FALSE(std::filesystem::exists(dir / ("out/" + R + "-" + slow)));
      CHECK_FALSE(alive(dir / ("pids/" + R + "-" + slow)));
    }
    // merge ran with the round's record (CHORUS_QUORUM_FILE).
    const std::string record = slurp(dir / ("merged-" + R + ".json"));
    CHECK(record.find("\"round\": " + R) != std::string::npos);
    CHECK(record.find("\"used\": 4") != std::string::npos);
    CHECK(record.find("\"members_dropped\": [\"sim[round=" + R + ",d=30]\", \"sim[round=" + R +
                      ",d=40]\"]") != std::string::npos);
  }
  auto status = run_chorus({"status", "--tasks"}, dir.path());
  INFO(status.out);
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("dropped by quorum: round 2 of 'ens' closed with 4 of 6") !=
        std::string::npos);
}

TEST_CASE("Integration.QuorumWorkflow.ValidateLocatesBadQuorums") {
  TempDir dir;
  std::string bad = kEnsemble;
  bad.replace(bad.find("k: 4"), 4, "k: 9");
  write_file(dir / "wf.yaml", bad);
  auto r = run_chorus({"validate", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("wf.yaml:10:43: k 9 of the quorum of task 'sim' is more than its n = 6 "
                   "members") != std::string::npos);
  std::string unknown = kEnsemble;
  unknown.replace(unknown.find("policy: static"), 14, "policy: dbx");
  write_file(dir / "wf.yaml", unknown);
  auto u = run_chorus({"validate", "wf.yaml"}, dir.path());
  CHECK(u.exit_code == 2);
  CHECK(u.err.find("wf.yaml:10:26: unknown quorum policy 'dbx'") != std::string::npos);
}
