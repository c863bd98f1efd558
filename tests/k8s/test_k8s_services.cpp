// Services on the REAL local cluster (tests/k8s/cluster.sh): a workflow service's replicas as
// Pods whose readinessProbe the kubelet runs, a headless Service object selecting them, `uses:`
// tasks started only once every replica is Ready and handed <Pod IP>:<port>, `chorus endpoints`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "support/journal.hpp"
#include "support/k8s_cluster.hpp"
#include "support/process.hpp"

using namespace chorus;
using namespace chorus::test;

namespace {

std::vector<std::string> run_argv(const std::string& kubeconfig) {
  return {chorus_bin(),   "run",      "wf.yaml", "--backend", "kubernetes",
          "--kubeconfig", kubeconfig, "--grace", "1s"};
}

}  // namespace

TEST_CASE("K8s.Services.AReadyServiceGatesItsUsesTaskAndItsEndpointsAreRight") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  // Each replica serves only after 4 s; the client fetches from every endpoint it was given,
  // then waits for the test's "go" (the workdir is the same directory inside the Pods).
  write_file(dir / "wf.yaml", std::string("name: web\n") + kK8sDefaults + R"(services:
  - name: web
    replicas: 2
    command: mkdir -p /www && echo "replica {replica}" > /www/index.html && sleep 4 && exec httpd -f -p {port} -h /www
    ready: {http: 8080, path: /index.html, timeout: 90s}
    restart: {policy: never}
tasks:
  - name: client
    uses: [web]
    command: |
      for e in $(echo "$CHORUS_SERVICE_WEB" | tr , ' '); do wget -q -O - "$e/index.html" || exit 9; done
      echo "$CHORUS_SERVICE_WEB" > endpoints.txt
      while [ ! -e go ]; do sleep 0.2; done
)");
  pid_t pid = start_process(run_argv(kc), dir.path());
  REQUIRE_MESSAGE(eventually([&] { return file_exists(dir / "endpoints.txt"); }, 120),
                  read_file(dir / "bg.err"));
  // While the service runs: its replicas' Pods, their IPs, the Service's Endpoints.
  auto pods = k8s_get_json(
      "/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dweb-1,chorus.service%3Dweb");
  REQUIRE(pods["items"].size() == 2);
  std::map<int, std::string> ip_of_replica;
  for (const auto& p : pods["items"]) {
    int replica = std::stoi(p["metadata"]["labels"].value("chorus.replica", "-1"));
    ip_of_replica[replica] = p["status"].value("podIP", "");
    CHECK(p["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] == 8080 + replica);
  }
  REQUIRE(ip_of_replica.size() == 2);
  const std::string expected =
      "http://" + ip_of_replica[0] + ":8080,http://" + ip_of_replica[1] + ":8081";
  CHECK(read_file(dir / "endpoints.txt") == expected + "\n");

  auto services =
      k8s_get_json("/api/v1/namespaces/default/services?labelSelector=chorus.run%3Dweb-1");
  REQUIRE(services["items"].size() == 1);
  const auto& svc = services["items"][0];
  const std::string svc_name = svc["metadata"].value("name", "");
  CHECK(svc_name.rfind("chorus-web-1-", 0) == 0);  // + the run token's head
  CHECK(svc_name.substr(svc_name.size() - 4) == "-web");
  CHECK(svc["spec"].value("clusterIP", "") == "None");
  auto ep = k8s_get_json("/api/v1/namespaces/default/endpoints/" + svc_name);
  std::set<std::string> listed;  // "ip:port" of every ready address the Endpoints hold
  for (const auto& subset : ep.value("subsets", nlohmann::json::array()))
    for (const auto& a : subset.value("addresses", nlohmann::json::array()))
      for (const auto& port : subset.value("ports", nlohmann::json::array()))
        listed.insert(a.value("ip", "") + ":" + std::to_string(port.value("port", 0)));
  CHECK(listed == std::set<std::string>{ip_of_replica[0] + ":8080", ip_of_replica[1] + ":8081"});

  auto shown = run_chorus({"endpoints", "web-1"}, dir.path());
  CHECK(shown.out.find("http://" + ip_of_replica[0] + ":8080") != std::string::npos);
  CHECK(shown.out.find("http://" + ip_of_replica[1] + ":8081") != std::string::npos);
  auto env = run_chorus({"endpoints", "web-1", "--env"}, dir.path());
  CHECK(env.out == "CHORUS_SERVICE_WEB=" + expected + "\n");

  write_file(dir / "go", "");
  int rc = wait_process(pid);
  INFO(read_file(dir / "bg.err"));
  CHECK(rc == 0);
  auto log = run_chorus({"logs", "web-1", "client"}, dir.path());
  CHECK(log.out == "replica 0\nreplica 1\n");
  // The client started after both replicas were Ready: its 'running' event comes after both
  // 'ready at' events in the journal.
  std::int64_t last_ready = -1, client_started = -1;
  int ready = 0;
  for (const auto& e : latest_run_events(dir / ".chorus")) {
    if (e.state != TaskState::running) continue;
    if (e.detail.rfind("ready at http://", 0) == 0) {
      ++ready;
      last_ready = e.seq;
    }
    if (e.name == "client" && client_started < 0) client_started = e.seq;
  }
  CHECK(ready == 2);
  CHECK(client_started > last_ready);
  CHECK(eventually([] { return k8s_left_of_run("web-1") == 0; }, 30));
  CHECK(k8s_left_of_run("web-1", "services") == 0);
}

TEST_CASE("K8s.Services.AProbeThatNeverPassesFailsItsUsersAfterTheStartupTimeout") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: deaf\n") + kK8sDefaults + R"(services:
  - name: deaf
    command: sleep 300
    ready: {tcp: 9000, timeout: 12s}
    restart: {policy: never}
tasks:
  - name: client
    uses: [deaf]
    command: "true"
)");
  auto r = run_process(run_argv(kc), dir.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("not ready after 12.00s (tcp probe: its Pod chorus-deaf-1-") !=
        std::string::npos);
  CHECK(r.err.find("runs but is not Ready: its readinessProbe has not passed)") !=
        std::string::npos);
  CHECK(r.err.find("service 'deaf' is not available") != std::string::npos);
  CHECK(eventually([] { return k8s_left_of_run("deaf-1") == 0; }, 30));
  CHECK(k8s_left_of_run("deaf-1", "services") == 0);
}

TEST_CASE("K8s.Services.AStdoutProbeIsRefusedAtItsLine") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  TempDir dir;
  write_file(dir / "wf.yaml", std::string("name: out\n") + kK8sDefaults + R"(services:
  - name: talker
    command: echo listening; sleep 300
    ready: {stdout: listening}
tasks:
  - name: client
    uses: [talker]
    command: "true"
)");
  auto r = run_process(run_argv(kc), dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("wf.yaml:8:12: service 'talker' has a stdout probe, which Kubernetes cannot "
                   "run as a readinessProbe; use a tcp, http or file probe") != std::string::npos);
  CHECK(k8s_left_of_run("out-1") == 0);
}
