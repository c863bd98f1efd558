// --resume of a run whose coordinator was SIGKILLed, on the REAL local cluster: the Pods it left
// are adopted (the one still running is followed, the one that finished meanwhile collected),
// nothing that ran runs again.
#include <doctest/doctest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "support/k8s_cluster.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

nlohmann::json pods_labelled(const std::string& selector) {
  auto j = k8s_get_json("/api/v1/namespaces/default/pods?labelSelector=" + selector);
  return j.contains("items") ? j["items"] : nlohmann::json::array();
}

std::string phase_of_task(const nlohmann::json& pods, const std::string& task) {
  for (const auto& p : pods)
    if (p["metadata"]["annotations"].value("chorus.task-name", "") == task)
      return p["status"].value("phase", "");
  return "";
}

std::string node_of_task(const nlohmann::json& pods, const std::string& task) {
  for (const auto& p : pods)
    if (p["metadata"]["annotations"].value("chorus.task-name", "") == task)
      return p["spec"].value("nodeName", "");
  return "";
}

// The node of `task`'s attempt `attempt` as the journal recorded it.
std::string journaled_node(const TempDir& dir, const std::string& task, int attempt) {
  auto r = run_process({"sqlite3", dir / ".chorus/chorus.db",
                        "SELECT node FROM events WHERE name = '" + task +
                            "' AND state = 'running' AND attempt = " + std::to_string(attempt)},
                       dir.path());
  std::string node = r.out;
  while (!node.empty() && (node.back() == '\n' || node.back() == '\r')) node.pop_back();
  return node;
}

}  // namespace

TEST_CASE("K8s.ResumeAdoptsThePodsAKilledCoordinatorLeftAndRunsNothingTwice") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  // Every task appends a line to its own file in the (hostPath) working directory per run.
  write_file(dir / "wf.yaml", R"(name: adopt
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
tasks:
  - name: quick
    command: echo run >> ran-quick
  - name: long
    command: echo run >> ran-long; sleep 20; echo long-output
  - name: mid
    command: echo run >> ran-mid; sleep 4
  - name: after
    after: [long]
    command: echo run >> ran-after
)");
  const std::vector<std::string> run = {chorus_bin(), "run",          "wf.yaml", "--backend",
                                        "kubernetes", "--kubeconfig", kc};
  pid_t pid = start_process(run, dir.path());
  // quick done, long and mid running in their Pods: then the coordinator dies outright.
  bool running = eventually(
      [&] {
        return file_exists(dir / "ran-quick") && file_exists(dir / "ran-long") &&
               file_exists(dir / "ran-mid") &&
               phase_of_task(pods_labelled("chorus.run%3Dadopt-1"), "long") == "Running";
      },
      90);
  ::kill(-pid, SIGKILL);
  (void)wait_process(pid);
  REQUIRE_MESSAGE(running, read_file(dir / "bg.err"));
  // mid finishes while no coordinator watches; long is still running.
  CHECK(eventually(
      [&] { return phase_of_task(pods_labelled("chorus.run%3Dadopt-1"), "mid") == "Succeeded"; },
      60));
  CHECK(phase_of_task(pods_labelled("chorus.run%3Dadopt-1"), "long") == "Running");
  const std::string long_node = node_of_task(pods_labelled("chorus.run%3Dadopt-1"), "long");
  const std::string mid_node = node_of_task(pods_labelled("chorus.run%3Dadopt-1"), "mid");
  REQUIRE(!long_node.empty());
  REQUIRE(!mid_node.empty());

  std::vector<std::string> resume = run;
  resume.push_back("--resume");
  auto r = run_process(resume, dir.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_lines(dir / "ran-quick").size() == 1);
  CHECK(read_lines(dir / "ran-long").size() == 1);
  CHECK(read_lines(dir / "ran-mid").size() == 1);
  CHECK(read_lines(dir / "ran-after").size() == 1);
  // The adopted attempts are booked where their Pods ran, not where placement would put them now.
  CHECK(journaled_node(dir, "long", 2) == long_node);
  CHECK(journaled_node(dir, "mid", 2) == mid_node);
  // The adopted Pod's log is the task's output, like any attempt's.
  auto logs = run_process({chorus_bin(), "logs", "latest", "long"}, dir.path());
  INFO("chorus logs latest long: ", logs.out, logs.err);
  CHECK(logs.out.find("long-output") != std::string::npos);
  CHECK(eventually([] { return k8s_left_of_run("adopt-1") == 0; }, 30));
}
