// chorus run --backend kubernetes against the REAL local cluster (tests/k8s/cluster.sh: etcd,
// kube-apiserver, controller manager, scheduler, two kubelets with their own containerd).
#include <doctest/doctest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

#include "support/k8s_cluster.hpp"
#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("K8s.SweepRunsAsPodsOnBothNodesWithExitCodesAndLogs") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: sweep\n") + kK8sDefaults + R"(tasks:
  - name: hello
    command: echo "on $CHORUS_NODE"
    foreach: {i: [1, 2, 3, 4]}
  - name: fail3
    command: echo about to fail; exit 3
  - name: noimage
    image: localhost/does-not-exist:1
    command: "true"
)");
  auto r = run_k8s(dir, kc);
  INFO(r.out, r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("6 tasks: 4 succeeded, 2 failed") != std::string::npos);
  CHECK(r.err.find("task 'fail3' failed (attempt 1): exit code 3") != std::string::npos);
  CHECK(r.err.find("ErrImageNeverPull for image localhost/does-not-exist:1") != std::string::npos);
  // Each Pod ran on the node placement chose (CHORUS_NODE is the nodeName we set), and with 2
  // cores per node the 4 single-core members filled both.
  std::set<std::string> nodes;
  for (int i = 1; i <= 4; ++i) {
    auto log = run_process({chorus_bin(), "logs", "sweep-1", "hello[i=" + std::to_string(i) + "]"},
                           dir.path());
    INFO(log.err);
    REQUIRE(log.exit_code == 0);
    CHECK(log.out.rfind("on chorus-k8s-n", 0) == 0);
    nodes.insert(log.out);
  }
  CHECK(nodes.size() == 2);
  auto log = run_process({chorus_bin(), "logs", "sweep-1", "fail3"}, dir.path());
  CHECK(log.out == "about to fail\n");
  CHECK(k8s_left_of_run("sweep-1") == 0);  // the run's Pods are deleted at its end
}

TEST_CASE("K8s.BadInputIsRefusedBeforeAnythingStarts") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: big\n") + kK8sDefaults + R"(tasks:
  - name: huge
    command: "true"
    cores: 64
)");
  auto big = run_k8s(dir, kc);
  CHECK(big.exit_code == 2);
  CHECK(
      big.err.find(
          "wf.yaml:8:12: task 'huge' can never run here: needs 64 cores, the largest node of this "
          "cluster (chorus-k8s-n") != std::string::npos);

  write_file(dir / "wf.yaml", R"(name: noimg
tasks:
  - name: a
    command: "true"
)");
  auto noimg = run_k8s(dir, kc);
  CHECK(noimg.exit_code == 2);
  CHECK(noimg.err.find("wf.yaml:3:11: task 'a' has no image") != std::string::npos);

  auto ns = run_k8s(dir, kc, {"--namespace", "nope"});
  CHECK(ns.exit_code != 0);
  CHECK(ns.err.find("namespace 'nope' does not exist on https://127.0.0.1:") != std::string::npos);

  auto missing = run_k8s(dir, dir / "no-such-kubeconfig");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("no kubeconfig at " + (dir / "no-such-kubeconfig")) != std::string::npos);

  // A server nobody listens on: bounded, with its address.
  std::string text = read_file(kc);
  auto at = text.find("https://127.0.0.1:");
  auto end = text.find('\n', at);
  text.replace(at, end - at, "https://127.0.0.1:1");
  write_file(dir / "down.kubeconfig", text);
  auto t0 = std::chrono::steady_clock::now();
  auto down = run_k8s(dir, dir / "down.kubeconfig");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  CHECK(down.exit_code != 0);
  CHECK(down.err.find("the Kubernetes API server at https://127.0.0.1:1 did not answer") !=
        std::string::npos);
}

TEST_CASE("K8s.ATokenWithoutRightsGetsTheMissingRightExplained") {
  auto kc = k8s_kubeconfig("kubeconfig-limited");
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: limited\n") + kK8sDefaults +
                                  "tasks:\n  - name: a\n    command: \"true\"\n");
  auto r = run_k8s(dir, kc);
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("forbidden") != std::string::npos);
  CHECK(r.err.find("(HTTP 403); the account of context") != std::string::npos);
  CHECK(r.err.find("lacks the rights") != std::string::npos);
}

TEST_CASE("K8s.InterruptDeletesEveryPodOfTheRun") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: long\n") + kK8sDefaults + R"(tasks:
  - name: sleeper
    command: echo up; sleep 300
    foreach: {i: [1, 2]}
)");
  pid_t pid = start_process({chorus_bin(), "run", "wf.yaml", "--backend", "kubernetes",
                             "--kubeconfig", kc, "--grace", "1s"},
                            dir.path());
  // Both Pods running (their output reached the log), then Ctrl-C.
  CHECK(eventually(
      [&] {
        auto j = nlohmann::json::parse(
            k8s_get("/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dlong-1"), nullptr,
            false);
        if (!j.is_object() || j["items"].size() != 2) return false;
        for (const auto& p : j["items"])
          if (p["status"].value("phase", "") != "Running") return false;
        return true;
      },
      60));
  ::kill(-pid, SIGINT);
  int rc = wait_process(pid);
  INFO(read_file(dir / "bg.err"));
  CHECK(rc != 0);
  CHECK(eventually([&] { return k8s_left_of_run("long-1") == 0; }, 30));
}
