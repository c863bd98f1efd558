// Interrupting `chorus run`: Ctrl-C / SIGTERM leave nothing behind; SIGKILL then --resume does
// not run a succeeded task twice.
#include <doctest/doctest.h>
#include <signal.h>

#include <map>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

nlohmann::json status_json(const std::string& dir) {
  auto r = run_chorus({"status", "--json", "--tasks"}, dir);
  if (r.exit_code != 0) return {};
  return nlohmann::json::parse(r.out, nullptr, false);
}

std::vector<pid_t> pids_in(const std::string& dir, int n) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    std::string path = dir + "/pid." + std::to_string(i);
    if (file_exists(path)) {
      auto text = read_file(path);
      if (!text.empty()) pids.push_back(static_cast<pid_t>(std::stol(text)));
    }
  }
  return pids;
}

void interrupt_test(int signal_number) {
  TempDir dir;
  // Each task leaves a grandchild too (the sleep in the background), to prove whole groups die.
  write_file(dir / "wf.yaml", R"Y(name: long
tasks:
  - name: sleeper
    foreach: {i: "range(0, 2)"}
    command: "sleep 600 & echo $! > pid.{i}; wait"
    cores: 1
  - name: later
    command: [/bin/true]
    after: [sleeper]
)Y");
  pid_t chorus = start_process({chorus_bin(), "run", "wf.yaml", "--grace", "1s"}, dir.path());
  REQUIRE(eventually([&] { return pids_in(dir.path(), 2).size() == 2; }, 30));
  auto pids = pids_in(dir.path(), 2);
  kill(chorus, signal_number);
  int code = wait_process(chorus);
  CHECK(code == 130);
  for (pid_t p : pids) CHECK(eventually([&] { return !process_alive(p); }, 5));
  auto j = status_json(dir.path());
  REQUIRE(!j.is_null());
  CHECK(j["status"] == "cancelled");
  CHECK(j["cancelled"] == 3);
  CHECK(read_file(dir / "bg.err").find("resume with: chorus run --resume long-1") !=
        std::string::npos);
}

}  // namespace

TEST_CASE("Integration.Interrupt.SigintStopsEveryProcessGroup") {
  interrupt_test(SIGINT);
}

TEST_CASE("Integration.Interrupt.SigtermStopsEveryProcessGroup") {
  interrupt_test(SIGTERM);
}

TEST_CASE("Integration.Interrupt.CancelCommandStopsLiveRun") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: cancelme
tasks:
  - name: sleeper
    command: "sleep 600 & echo $! > pid.0; wait"
)Y");
  pid_t chorus = start_process({chorus_bin(), "run", "wf.yaml", "--grace", "1s"}, dir.path());
  REQUIRE(eventually([&] { return pids_in(dir.path(), 1).size() == 1; }, 30));
  auto r = run_chorus({"cancel", "cancelme-1"}, dir.path());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("cancelled") != std::string::npos);
  CHECK(wait_process(chorus) == 130);
  CHECK(eventually([&] { return !process_alive(pids_in(dir.path(), 1)[0]); }, 5));
}

TEST_CASE("Integration.Resume.SigkillThenResumeRunsNoSucceededTaskTwice") {
  TempDir dir;
  // 24 tasks of ~0.3 s on (at most) the machine's cores; each logs every execution.
  write_file(dir / "wf.yaml", R"Y(name: resumable
tasks:
  - name: step
    foreach: {i: "range(0, 24)"}
    command: "echo {i} >> executions.log; sleep 0.3"
    cores: 1
  - name: final
    command: "echo final >> executions.log"
    after: [step]
)Y");
  pid_t chorus = start_process({chorus_bin(), "run", "wf.yaml"}, dir.path());
  // Kill once a few tasks have succeeded, mid-run.
  REQUIRE(eventually(
      [&] {
        auto j = status_json(dir.path());
        return !j.is_null() && j["succeeded"].get<int>() >= 4;
      },
      60));
  kill(chorus, SIGKILL);
  CHECK(wait_process(chorus) == 128 + SIGKILL);
  auto before = status_json(dir.path());
  REQUIRE(!before.is_null());
  CHECK(before["status"] == "interrupted");
  std::vector<std::string> succeeded_before;
  for (const auto& t : before["tasks"]) {
    if (t["state"] == "succeeded") succeeded_before.push_back(t["task"]);
  }
  REQUIRE(succeeded_before.size() >= 4);
  REQUIRE(succeeded_before.size() < 25);
  sleep_ms(1000);  // let the orphans of the killed run finish their sleep

  auto r = run_chorus({"run", "--resume", "resumable-1"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto after = status_json(dir.path());
  CHECK(after["status"] == "succeeded");
  CHECK(after["succeeded"] == 25);

  std::map<std::string, int> executions;
  for (const auto& line : read_lines(dir / "executions.log")) ++executions[line];
  for (const auto& name : succeeded_before) {
    // "step[i=7]" -> "7"
    auto value = name.substr(name.find('=') + 1);
    value.pop_back();
    CHECK_MESSAGE(executions[value] == 1, name);
  }
  CHECK(executions["final"] == 1);
  for (int i = 0; i < 24; ++i) CHECK(executions[std::to_string(i)] >= 1);
}

TEST_CASE("Integration.Resume.ByFileRerunsOnlyFailedAndChanged") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: fix
tasks:
  - name: a
    command: "echo a >> runs.log"
  - name: b
    command: "echo b >> runs.log; test -f fixed"
    after: [a]
)Y");
  CHECK(run_chorus({"run", "wf.yaml"}, dir.path()).exit_code == 1);
  write_file(dir / "fixed", "");
  auto r = run_chorus({"run", "wf.yaml", "--resume"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_lines(dir / "runs.log") == std::vector<std::string>{"a", "b", "b"});
  // A changed spec reruns even a succeeded task.
  write_file(dir / "wf.yaml", R"Y(name: fix
tasks:
  - name: a
    command: "echo a2 >> runs.log"
  - name: b
    command: "echo b >> runs.log; test -f fixed"
    after: [a]
)Y");
  CHECK(run_chorus({"run", "wf.yaml", "--resume"}, dir.path()).exit_code == 0);
  CHECK(read_lines(dir / "runs.log") == std::vector<std::string>{"a", "b", "b", "a2"});
}

TEST_CASE("Integration.Resume.KillsTheOrphansOfAKilledCoordinator") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: orphans
tasks:
  - name: sleeper
    foreach: {i: "range(0, 2)"}
    command: "test -f second && exit 0; sleep 600 & echo $! > pid.{i}; wait"
)Y");
  pid_t chorus = start_process({chorus_bin(), "run", "wf.yaml"}, dir.path());
  REQUIRE(eventually([&] { return pids_in(dir.path(), 2).size() == 2; }, 30));
  kill(chorus, SIGKILL);
  CHECK(wait_process(chorus) == 128 + SIGKILL);
  auto orphans = pids_in(dir.path(), 2);
  for (pid_t p : orphans) CHECK(process_alive(p));  // SIGKILL cannot take the tasks with it
  write_file(dir / "second", "");
  auto r = run_chorus({"run", "--resume", "orphans-1"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  for (pid_t p : orphans) CHECK(eventually([&] { return !process_alive(p); }, 5));
}
