// A live task's output and `chorus cancel` on the REAL local cluster: `chorus logs` shows what a
// running Pod printed so far (its log is followed into the task's stdout file), and cancel
// deletes every Pod of the run, also of a run whose coordinator is gone.
#include <doctest/doctest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "support/k8s_cluster.hpp"
#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("K8s.LogsOfALiveTaskAndCancelDeletesItsPods") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", R"(name: live
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
tasks:
  - name: talker
    command: echo first-line; sleep 2; echo second-line; sleep 300
)");
  pid_t pid = start_process({chorus_bin(), "run", "wf.yaml", "--backend", "kubernetes",
                             "--kubeconfig", kc, "--grace", "1s"},
                            dir.path());
  // Both lines while the task still runs: the log is followed, not fetched at the end.
  std::string shown;
  bool live = eventually(
      [&] {
        shown = run_process({chorus_bin(), "logs", "latest", "talker"}, dir.path()).out;
        return shown.find("second-line") != std::string::npos;
      },
      90);
  INFO(shown, read_file(dir / "bg.err"));
  CHECK(live);
  CHECK(shown.find("first-line") < shown.find("second-line"));
  CHECK(process_alive(pid));

  auto cancel = run_process({chorus_bin(), "cancel", "latest"}, dir.path());
  INFO(cancel.out, cancel.err);
  CHECK(cancel.exit_code == 0);
  CHECK(wait_process(pid) != 0);
  CHECK(eventually([] { return k8s_left_of_run("live-1") == 0; }, 30));
  auto status = run_process({chorus_bin(), "status", "latest", "--json"}, dir.path());
  CHECK(status.out.find("cancelled") != std::string::npos);
}

// A coordinator killed outright leaves its Pods running; `chorus cancel --backend kubernetes`
// deletes them (by the run's token) and marks the run cancelled.
TEST_CASE("K8s.CancelOfARunWhoseCoordinatorDiedDeletesItsPods") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", R"(name: orphaned
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
tasks:
  - name: one
    command: sleep 300
  - name: two
    command: sleep 300
)");
  pid_t pid = start_process(
      {chorus_bin(), "run", "wf.yaml", "--backend", "kubernetes", "--kubeconfig", kc}, dir.path());
  auto running = [] {
    auto j = k8s_get_json("/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dorphaned-1");
    std::size_t n = 0;
    for (const auto& p : j.value("items", nlohmann::json::array()))
      n += p["status"].value("phase", "") == "Running";
    return n;
  };
  bool both = eventually([&] { return running() == 2; }, 90);
  ::kill(-pid, SIGKILL);
  (void)wait_process(pid);
  REQUIRE_MESSAGE(both, read_file(dir / "bg.err"));
  CHECK(running() == 2);  // nobody deleted them

  auto cancel =
      run_process({chorus_bin(), "cancel", "latest", "--backend", "kubernetes", "--kubeconfig", kc},
                  dir.path());
  INFO(cancel.out, cancel.err);
  CHECK(cancel.exit_code == 0);
  CHECK(cancel.out.find("marked cancelled; deleted 2 Pods of it") != std::string::npos);
  CHECK(eventually([] { return k8s_left_of_run("orphaned-1") == 0; }, 30));
  auto status = run_process({chorus_bin(), "status", "latest", "--json"}, dir.path());
  CHECK(status.out.find("cancelled") != std::string::npos);
}
