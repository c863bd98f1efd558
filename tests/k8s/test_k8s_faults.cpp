// Faults on the REAL local cluster (tests/k8s/cluster.sh): a container over its memory limit
// (OOMKilled), and the API server stopped mid-run (bounded failure, the journal keeps what
// finished, --resume finishes the rest once the server is back). ErrImageNeverPull is in
// test_k8s_run.cpp's sweep.
#include <doctest/doctest.h>

#include <csignal>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "support/k8s_cluster.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

// task name -> its row of `chorus status --json --tasks` (state, detail, attempt, exit_code).
using Rows = std::map<std::string, nlohmann::json>;
Rows task_rows(const TempDir& dir) {
  Rows rows;
  auto r = run_chorus({"status", "--json", "--tasks"}, dir.path());
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_object() && j.contains("tasks"))
    for (const auto& t : j["tasks"]) rows[t.value("task", "")] = t;
  return rows;
}

std::string state_of(const Rows& rows, const std::string& task, const char* field = "state") {
  auto it = rows.find(task);
  return it == rows.end() ? "(no row)" : it->second.value(field, "");
}

std::size_t count_lines(const std::string& path, const std::string& line) {
  std::size_t n = 0;
  for (const auto& l : read_lines(path)) n += l == line ? 1 : 0;
  return n;
}

bool apiserver_answers() {
  return k8s_get("/readyz") == "ok";
}

// Every node Ready, schedulable and without a taint that keeps Pods off: after the apiserver was
// away long enough, the node controller marks the nodes unreachable (NotReady, tainted) until their
// kubelets report again, and a case that starts meanwhile finds no node that takes Pods.
bool nodes_ready() {
  auto j = k8s_get_json("/api/v1/nodes");
  if (!j.contains("items") || !j["items"].is_array() || j["items"].empty()) return false;
  for (const auto& node : j["items"]) {
    const auto& spec = node.value("spec", nlohmann::json::object());
    if (spec.value("unschedulable", false)) return false;
    // Chorus's own rule (kube::KubeNode::usable): a NoSchedule or NoExecute taint keeps its
    // untolerating Pods off; a PreferNoSchedule one does not.
    for (const auto& t : spec.value("taints", nlohmann::json::array()))
      if (t.value("effect", "") != "PreferNoSchedule") return false;
    bool ready = false;
    for (const auto& c : node["status"].value("conditions", nlohmann::json::array()))
      if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
    if (!ready) return false;
  }
  return true;
}

// Whatever happens in the case, the apiserver it stopped is running again at its end and the
// nodes take Pods again, so the later cases (and the fixture's stop) find a whole cluster.
struct ApiServerBack {
  ~ApiServerBack() {
    if (!apiserver_answers()) run_process({source_dir() + "/tests/k8s/cluster.sh", "start"}, "/");
    (void)eventually([] { return nodes_ready(); }, 120);
  }
};

}  // namespace

TEST_CASE("K8s.OverTheMemoryLimitIsOomKilledAndTheOthersRunOn") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  // 200 MB in a shell variable against a 32 MiB limit: the cgroup's OOM killer ends it.
  write_file(dir / "wf.yaml", std::string("name: oom\n") + kK8sDefaults + R"(tasks:
  - name: hog
    memory: 32M
    command: x=$(head -c 200000000 /dev/zero | tr '\0' a); echo held it
  - name: fine
    foreach: {i: [1, 2]}
    memory: 32M
    command: echo fine {i}
  - name: after
    after: [fine]
    command: echo after
)");
  auto r = run_k8s(dir, kc);
  INFO(r.out, r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("4 tasks: 3 succeeded, 1 failed") != std::string::npos);
  CHECK(r.err.find("task 'hog' failed (attempt 1): OOMKilled (exit code 137)") !=
        std::string::npos);
  auto rows = task_rows(dir);
  REQUIRE(state_of(rows, "hog") == "failed");
  CHECK(state_of(rows, "hog", "detail").find("OOMKilled") != std::string::npos);
  CHECK(rows["hog"].value("exit_code", 0) == 137);  // REQUIREd above: the row exists
  for (const char* t : {"fine[i=1]", "fine[i=2]", "after"})
    CHECK_MESSAGE(state_of(rows, t) == "succeeded", t);
  auto log = run_process({chorus_bin(), "logs", "oom-1", "fine[i=2]"}, dir.path());
  CHECK(log.out == "fine 2\n");
  CHECK(eventually([] { return k8s_left_of_run("oom-1") == 0; }, 30));
}

// Another workload's Pods hold a core of each node (Chorus books cores from its own Pods only):
// the kubelets refuse one of the run's two Pods per node (OutOfcpu). Once a refusal is seen the
// other workload ends, and the refused Pods, made again, are admitted: every task runs, on its
// first attempt.
TEST_CASE("K8s.PodsRefusedForCoresOthersHoldAreMadeAgainUntilAdmitted") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  const std::vector<std::string> nodes = {"chorus-k8s-n1", "chorus-k8s-n2"};
  auto blocker = [](const std::string& node) {
    nlohmann::json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "blocker-" + node}, {"labels", {{"test", "blocker"}}}}},
        {"spec",
         {{"nodeName", node},
          {"restartPolicy", "Never"},
          {"enableServiceLinks", false},
          {"terminationGracePeriodSeconds", 0},
          {"containers",
           {{{"name", "c"},
             {"image", "localhost/busybox:1.35"},
             {"imagePullPolicy", "Never"},
             {"command", {"sleep", "300"}},
             {"resources", {{"requests", {{"cpu", "1"}}}, {"limits", {{"cpu", "1"}}}}}}}}}}};
    return k8s_curl("POST", "/api/v1/namespaces/default/pods", pod.dump());
  };
  auto blockers_running = [] {
    auto j = k8s_get_json("/api/v1/namespaces/default/pods?labelSelector=test%3Dblocker");
    int n = 0;
    for (const auto& p : j.value("items", nlohmann::json::array()))
      n += p["status"].value("phase", "") == "Running";
    return n;
  };
  auto refusals = [] {
    auto events = k8s_get_json("/api/v1/namespaces/default/events");
    int n = 0;
    for (const auto& e : events.value("items", nlohmann::json::array()))
      n += e.value("reason", "") == "OutOfcpu" &&
           e["involvedObject"].value("name", "").rfind("chorus-refused-", 0) == 0;
    return n;
  };
  auto remove_blockers = [&] {
    for (const auto& n : nodes) k8s_delete("/api/v1/namespaces/default/pods/blocker-" + n);
  };
  struct Cleanup {
    std::function<void()> undo;
    ~Cleanup() { undo(); }
  } cleanup{remove_blockers};
  std::string made;
  for (const auto& n : nodes) made += blocker(n);
  INFO(made);
  REQUIRE(eventually([&] { return blockers_running() == 2; }, 60));

  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: refused\n") + kK8sDefaults + R"Y(tasks:
  - name: t
    foreach: {i: "range(0, 4)"}
    command: echo ran-{i}
)Y");
  pid_t pid = start_process(
      {chorus_bin(), "run", "wf.yaml", "--backend", "kubernetes", "--kubeconfig", kc}, dir.path());
  const bool refused = eventually([&] { return refusals() >= 1; }, 60);
  remove_blockers();
  const int code = wait_process(pid);
  INFO(read_file(dir / "bg.out"), read_file(dir / "bg.err"));
  REQUIRE(refused);
  CHECK(code == 0);
  const Rows rows = task_rows(dir);
  for (int i = 0; i < 4; ++i) {
    const std::string t = "t[i=" + std::to_string(i) + "]";
    CHECK(state_of(rows, t) == "succeeded");
    CHECK(rows.count(t) == 1);
    if (rows.count(t) == 1) CHECK(rows.at(t).value("attempt", 0) == 1);
  }
}

TEST_CASE("K8s.ApiServerStoppedMidRunFailsBoundedKeepsTheFinishedAndResumeFinishesTheRest") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  ApiServerBack back;
  TempDir dir;
  // Every task appends its name to runs.log in the run's directory (a hostPath in each Pod), so
  // the file counts how often each ran, across both coordinators.
  write_file(dir / "wf.yaml", std::string("name: apidown\n") + kK8sDefaults + R"(tasks:
  - name: quick
    foreach: {i: [1, 2]}
    command: echo quick-{i} >> runs.log
  - name: long
    foreach: {i: [1, 2]}
    command: echo long-{i} >> runs.log; sleep 20
  - name: last
    after: [long]
    command: echo last >> runs.log
)");
  pid_t pid = start_process({chorus_bin(), "run", "wf.yaml", "--backend", "kubernetes",
                             "--kubeconfig", kc, "--grace", "1s", "--api-give-up", "10s"},
                            dir.path());
  // The quick ones finished (journaled) while the long ones run.
  bool mid_run = eventually(
      [&] {
        auto rows = task_rows(dir);
        return state_of(rows, "quick[i=1]") == "succeeded" &&
               state_of(rows, "quick[i=2]") == "succeeded" &&
               count_lines(dir / "runs.log", "long-1") == 1 &&
               count_lines(dir / "runs.log", "long-2") == 1;
      },
      90);
  REQUIRE_MESSAGE(mid_run, read_file(dir / "bg.err"));
  std::string pid_file = k8s_dir() + "/run/kube-apiserver.pid";
  pid_t apiserver = static_cast<pid_t>(std::stol(read_file(pid_file)));
  REQUIRE(::kill(apiserver, SIGKILL) == 0);

  // Bounded: --api-give-up 10s, then the run ends. The 120 s here only keeps a hang from
  // hanging the suite; a process still alive then is the failure.
  bool ended = eventually([&] { return !process_alive(pid); }, 120);
  if (!ended) ::kill(-pid, SIGKILL);
  int rc = wait_process(pid);
  std::string err = read_file(dir / "bg.err");
  INFO(err);
  REQUIRE(ended);
  CHECK(rc != 0);
  CHECK(err.find("the Kubernetes API server at https://127.0.0.1:") != std::string::npos);
  CHECK(err.find("stopped answering") != std::string::npos);
  auto rows = task_rows(dir);
  CHECK(state_of(rows, "quick[i=1]") == "succeeded");
  CHECK(state_of(rows, "quick[i=2]") == "succeeded");
  CHECK(state_of(rows, "long[i=1]", "detail").find("stopped answering") != std::string::npos);
  CHECK(state_of(rows, "last") != "succeeded");

  // The server back (cluster.sh start starts what is not running), then --resume: the rest
  // runs, nothing runs twice.
  auto start = run_process({source_dir() + "/tests/k8s/cluster.sh", "start"}, "/");
  INFO(start.err);
  REQUIRE(start.exit_code == 0);
  CHECK(start.err.find("reusing it") != std::string::npos);
  auto resumed = run_k8s(dir, kc, {"--resume"});
  INFO(resumed.out, resumed.err);
  CHECK(resumed.exit_code == 0);
  rows = task_rows(dir);
  for (const char* t : {"quick[i=1]", "quick[i=2]", "long[i=1]", "long[i=2]", "last"})
    CHECK_MESSAGE(state_of(rows, t) == "succeeded", t);
  CHECK(count_lines(dir / "runs.log", "quick-1") == 1);
  CHECK(count_lines(dir / "runs.log", "quick-2") == 1);
  CHECK(count_lines(dir / "runs.log", "last") == 1);
  // The long ones' Pods ran on while the server was away; the resume adopts them (still running
  // or succeeded) instead of starting them again.
  CHECK(count_lines(dir / "runs.log", "long-1") == 1);
  CHECK(count_lines(dir / "runs.log", "long-2") == 1);
  CHECK(eventually([] { return k8s_left_of_run("apidown-1") == 0; }, 30));
}

TEST_CASE("K8s.AHungApiServerFailsTheRunBoundedToo") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  pid_t apiserver = static_cast<pid_t>(std::stol(read_file(k8s_dir() + "/run/kube-apiserver.pid")));
  ApiServerBack back;  // destroyed after `cont`: the server continued, then its nodes Ready
  // SIGSTOP: the server's connections stay open and silent, unlike a killed one's. Continued
  // whatever happens in the case.
  struct Continue {
    pid_t pid;
    ~Continue() { ::kill(pid, SIGCONT); }
  } cont{apiserver};
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: apihung\n") + kK8sDefaults + R"(tasks:
  - name: long
    command: echo up; sleep 60
)");
  pid_t pid = start_process({chorus_bin(), "run", "wf.yaml", "--backend", "kubernetes",
                             "--kubeconfig", kc, "--grace", "1s", "--api-give-up", "10s"},
                            dir.path());
  bool running = eventually(
      [&] {
        auto j =
            k8s_get_json("/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dapihung-1");
        return j.contains("items") && j["items"].size() == 1 &&
               j["items"][0]["status"].value("phase", "") == "Running";
      },
      90);
  REQUIRE_MESSAGE(running, read_file(dir / "bg.err"));
  REQUIRE(::kill(apiserver, SIGSTOP) == 0);
  // Bounded by --api-give-up plus the watch's silence limit and the requests' own timeouts;
  // the 150 s only keeps a hang from hanging the suite.
  bool ended = eventually([&] { return !process_alive(pid); }, 150);
  if (!ended) ::kill(-pid, SIGKILL);
  (void)wait_process(pid);
  std::string err = read_file(dir / "bg.err");
  INFO(err);
  CHECK(ended);
  CHECK(err.find("stopped answering") != std::string::npos);
  CHECK(err.find("the run's Pods may be left in the cluster") != std::string::npos);
  ::kill(apiserver, SIGCONT);
  CHECK(eventually([] { return apiserver_answers(); }, 30));
  // The run could not delete its Pod while the server hung (a resume would adopt it): by hand.
  k8s_delete(
      "/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dapihung-1&gracePeriodSeconds=0");
  CHECK(eventually([] { return k8s_left_of_run("apihung-1") == 0; }, 60));
  // The node controller saw the kubelets silent while the server hung: the next case needs
  // them Ready and untainted again.
  CHECK(eventually([] { return nodes_ready(); }, 120));
}
