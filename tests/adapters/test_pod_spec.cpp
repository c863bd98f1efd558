// One attempt as a Pod and a Pod's status as an outcome (adapters/kubernetes/pod_spec.*): what the
// real cluster's tests (tests/k8s/) rely on, case by case, with Pod objects as the API writes them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/pod_spec.hpp"
#include "adapters/kubernetes/service_object.hpp"

using namespace chorus;
using namespace chorus::kube;
using nlohmann::json;

namespace {

PodNaming naming(std::string run, std::string token, std::string image, OwnerPod owner = {}) {
  PodNaming n;
  n.run = std::move(run);
  n.token = std::move(token);
  n.default_image = std::move(image);
  n.owner = std::move(owner);
  return n;
}

// `true` as task `id` of run-1, its request pointing at `spec` (which must outlive it).
LaunchRequest true_task(TaskSpec& spec, TaskId id) {
  spec.id = id;
  spec.name = "t";
  spec.cmd.shell = "true";
  LaunchRequest r;
  r.spec = &spec;
  r.env = {{"CHORUS_RUN_ID", "run-1"}};
  return r;
}

}  // namespace

TEST_CASE("PodSpec.ManifestCarriesPlacementResourcesEnvAndLabels") {
  TaskSpec s;
  s.id = 7;
  s.name = "fit[x=1]";
  s.per_rank = {2, 512, 1};
  s.cmd.shell = "echo $X";
  s.env = {{"X", "1"}};
  s.image = "localhost/busybox:1.35";
  s.image_pull_policy = "Never";
  LaunchRequest r;
  r.spec = &s;
  r.attempt = 2;
  r.node = "chorus-k8s-n2";
  r.workdir = "/tmp/run";
  r.env = {{"CHORUS_RUN_ID", "run-1"}};
  auto m = pod_manifest(r, naming("run-1", "", ""), pod_name("run-1", 7, 2));
  CHECK(m["metadata"]["name"] == "chorus-run-1-7-2");
  CHECK(m["metadata"]["labels"]["chorus.run"] == "run-1");
  CHECK(m["metadata"]["labels"]["chorus.task"] == "7");
  CHECK(m["metadata"]["labels"]["chorus.attempt"] == "2");
  CHECK(m["spec"]["restartPolicy"] == "Never");
  CHECK(m["spec"]["nodeName"] == "chorus-k8s-n2");
  const auto& c = m["spec"]["containers"][0];
  CHECK(c["image"] == "localhost/busybox:1.35");
  CHECK(c["imagePullPolicy"] == "Never");
  CHECK(c["command"] == json::array({"/bin/sh", "-c", "echo $X"}));
  CHECK(c["resources"]["requests"]["cpu"] == "2");
  CHECK(c["resources"]["limits"]["memory"] == "512Mi");
  CHECK(c["resources"]["limits"]["nvidia.com/gpu"] == "1");
  CHECK(c["workingDir"] == "/tmp/run");
  CHECK(c["env"].size() == 2);
  CHECK_FALSE(m["metadata"].contains("ownerReferences"));  // no coordinator Pod: no owner
}

// The Pod's terminationGracePeriodSeconds is the task's own stop grace, else the run's, so a
// deletion by the garbage collector or kubectl waits as long as chorus's own; neither: absent
// (Kubernetes' 30 s).
TEST_CASE("PodSpec.TerminationGraceIsTheTasksElseTheRuns") {
  TaskSpec s;
  LaunchRequest r = true_task(s, 3);
  PodNaming n = naming("run-1", "", "localhost/busybox:1.35");
  CHECK_FALSE(pod_manifest(r, n, "p")["spec"].contains("terminationGracePeriodSeconds"));
  n.default_grace = std::chrono::seconds(5);
  CHECK(pod_manifest(r, n, "p")["spec"]["terminationGracePeriodSeconds"] == 5);
  s.kill_grace = std::chrono::seconds(2);
  CHECK(pod_manifest(r, n, "p")["spec"]["terminationGracePeriodSeconds"] == 2);
  s.kill_grace = std::chrono::milliseconds(200);  // at least a second: Kubernetes' unit
  CHECK(pod_manifest(r, n, "p")["spec"]["terminationGracePeriodSeconds"] == 1);
}

TEST_CASE("PodSpec.NamesAndLabelsAreValidKubernetesNames") {
  std::string long_run(100, 'A');
  auto n = pod_name(long_run + "_x", 123, 4);
  CHECK(n.size() <= 63);
  CHECK(n.rfind("chorus-", 0) == 0);
  CHECK(n.substr(n.size() - 6) == "-123-4");
  for (char c : n) CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'));
  CHECK(label_value("--a b--") == "a-b");
  CHECK(label_value(std::string(80, 'x')).size() == 63);
}

TEST_CASE("PodSpec.OutcomesCarryKubernetesReasons") {
  auto terminated = [](const char* phase, int code, const char* reason) {
    return json{
        {"status",
         {{"phase", phase},
          {"containerStatuses",
           json::array(
               {{{"image", "i"},
                 {"state", {{"terminated", {{"exitCode", code}, {"reason", reason}}}}}}})}}}};
  };
  CHECK_FALSE(pod_outcome(json{{"status", {{"phase", "Pending"}}}}).has_value());
  CHECK_FALSE(pod_outcome(json{{"status", {{"phase", "Running"}}}}).has_value());
  auto ok = pod_outcome(terminated("Succeeded", 0, "Completed"));
  REQUIRE(ok);
  CHECK(ok->kind == UpdateKind::exited);
  CHECK(ok->exit_code == 0);
  auto three = pod_outcome(terminated("Failed", 3, "Error"));
  REQUIRE(three);
  CHECK(three->exit_code == 3);
  CHECK(three->message == "exit code 3");
  auto oom = pod_outcome(terminated("Failed", 137, "OOMKilled"));
  REQUIRE(oom);
  CHECK(oom->message == "OOMKilled (exit code 137)");
  auto never = pod_outcome(json{
      {"status",
       {{"phase", "Pending"},
        {"containerStatuses",
         json::array({{{"image", "localhost/nope:1"},
                       {"state",
                        {{"waiting",
                          {{"reason", "ErrImageNeverPull"}, {"message", "not present"}}}}}}})}}}});
  REQUIRE(never);
  CHECK(never->exit_code != 0);
  CHECK(never->message == "Kubernetes: ErrImageNeverPull for image localhost/nope:1: not present");
  auto evicted = pod_outcome(
      json{{"status", {{"phase", "Failed"}, {"reason", "Evicted"}, {"message", "low memory"}}}});
  REQUIRE(evicted);
  CHECK(evicted->kind == UpdateKind::lost);
  CHECK(evicted->message == "Kubernetes: Evicted: low memory");
  // Still creating the container: not an outcome.
  CHECK_FALSE(
      pod_outcome(
          json{{"status",
                {{"phase", "Pending"},
                 {"containerStatuses",
                  json::array({{{"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}})}}}})
          .has_value());
}

TEST_CASE("PodSpec.AKubeletRefusalIsToldFromTheTasksOwnFailure") {
  auto refused = json{{"status",
                       {{"phase", "Failed"},
                        {"reason", "OutOfcpu"},
                        {"message", "Pod Node didn't have enough resource: cpu"}}}};
  CHECK(kubelet_refused(refused));
  CHECK(kubelet_refused(json{{"status", {{"phase", "Failed"}, {"reason", "OutOfmemory"}}}}));
  // A container that ran and failed is the task's own failure, whatever the reason says.
  auto ran = refused;
  ran["status"]["containerStatuses"] =
      json::array({{{"state", {{"terminated", {{"exitCode", 1}}}}}}});
  CHECK_FALSE(kubelet_refused(ran));
  CHECK_FALSE(kubelet_refused(json{{"status", {{"phase", "Failed"}, {"reason", "Evicted"}}}}));
  CHECK_FALSE(kubelet_refused(json{{"status", {{"phase", "Pending"}, {"reason", "OutOfcpu"}}}}));
  // Names of the Pods made again stay valid: at most 63 characters, ending in -r<k>.
  const std::string name = pod_name(std::string(100, 'a'), 123, 4);
  const std::string again = readmit_name(name, 8);
  CHECK(again.size() <= 63);
  CHECK(again.rfind("chorus-a", 0) == 0);
  CHECK(again.substr(again.size() - 9) == "-123-4-r8");
  CHECK(readmit_name("chorus-run-1-1", 2) == "chorus-run-1-1-r2");
}

namespace {

ServiceSpec web_service(ProbeKind kind) {
  ServiceSpec svc;
  svc.name = "web";
  svc.replicas = 2;
  svc.ready.kind = kind;
  svc.ready.port = 8080;
  svc.ready.path = kind == ProbeKind::http ? "/health" : "ready.txt";
  svc.ready.interval = std::chrono::milliseconds(200);
  return svc;
}

}  // namespace

TEST_CASE("PodSpec.AServiceReplicaCarriesItsProbeAsAReadinessProbeAndItsLabels") {
  ServiceSpec svc = web_service(ProbeKind::http);
  TaskSpec s;
  s.id = 3;
  s.name = "web[replica=1]";
  s.kind = TaskKind::service;
  s.service = 0;
  s.replica = 1;
  s.cmd.shell = "httpd -f -p 8081";
  LaunchRequest r;
  r.spec = &s;
  r.service = &svc;
  r.node = "chorus-k8s-n1";
  r.workdir = "/tmp/run";
  auto m =
      pod_manifest(r, naming("run-1", "tok", "localhost/busybox:1.35"), pod_name("run-1", 3, 1));
  CHECK(m["metadata"]["labels"]["chorus.service"] == "web");
  CHECK(m["metadata"]["labels"]["chorus.replica"] == "1");
  const auto& c = m["spec"]["containers"][0];
  // Replica 1 listens on port + 1; the port's name is what the Service targets.
  CHECK(c["ports"] ==
        json::array({{{"name", "service"}, {"containerPort", 8081}, {"protocol", "TCP"}}}));
  const auto& p = c["readinessProbe"];
  CHECK(p["httpGet"]["path"] == "/health");
  CHECK(p["httpGet"]["port"] == 8081);
  CHECK(p["periodSeconds"] == 1);  // 200 ms rounded up to Kubernetes' whole seconds
  CHECK(p["timeoutSeconds"] == 2);

  svc.ready.kind = ProbeKind::tcp;
  svc.ready.interval = std::chrono::milliseconds(2500);
  auto tcp = readiness_probe(svc.ready, 8080, "/tmp/run");
  CHECK(tcp["tcpSocket"]["port"] == 8080);
  CHECK(tcp["periodSeconds"] == 3);
  CHECK_FALSE(tcp.contains("httpGet"));

  // A file probe runs in the container, where the run's directory is mounted at the same path.
  auto file = readiness_probe(web_service(ProbeKind::file).ready, 0, "/tmp/run");
  CHECK(file["exec"]["command"] == json::array({"test", "-e", "/tmp/run/ready.txt"}));
  ServiceSpec by_file = web_service(ProbeKind::file);
  CHECK(service_port(by_file, 1) == 0);
  r.service = &by_file;
  auto fm = pod_manifest(r, naming("run-1", "tok", "i"), "p");
  CHECK_FALSE(fm["spec"]["containers"][0].contains("ports"));
  CHECK(fm["spec"]["containers"][0]["readinessProbe"].contains("exec"));

  ServiceSpec by_stdout = web_service(ProbeKind::stdout_regex);
  CHECK(readiness_probe(by_stdout.ready, 0, "/tmp/run").is_null());
  CHECK(stdout_probe_problem(by_stdout).find("service 'web' has a stdout probe") == 0);
  CHECK(stdout_probe_problem(svc).empty());

  // A plain task gets none of it.
  TaskSpec plain;
  plain.cmd.shell = "true";
  LaunchRequest pr;
  pr.spec = &plain;
  auto pm = pod_manifest(pr, naming("run-1", "tok", "i"), "q");
  CHECK_FALSE(pm["metadata"]["labels"].contains("chorus.service"));
  CHECK_FALSE(pm["spec"]["containers"][0].contains("readinessProbe"));
}

TEST_CASE("PodSpec.TheServiceObjectIsHeadlessAndSelectsTheRunsReplicas") {
  ServiceSpec svc = web_service(ProbeKind::tcp);
  auto m = service_manifest(svc, "run-1", "0123abcd", service_object_name("run-1", "web"));
  CHECK(m["kind"] == "Service");
  CHECK(m["metadata"]["name"] == "chorus-run-1-web");
  CHECK(m["metadata"]["labels"]["chorus.run"] == "run-1");
  CHECK(m["metadata"]["labels"]["chorus.token"] == "0123abcd");  // what shutdown() selects by
  CHECK(m["spec"]["clusterIP"] == "None");
  // By token: another run with the same id in the namespace has other replicas.
  CHECK(m["spec"]["selector"] == json{{"chorus.token", "0123abcd"}, {"chorus.service", "web"}});
  CHECK(service_manifest(svc, "run-1", "", "n")["spec"]["selector"] ==
        json{{"chorus.run", "run-1"}, {"chorus.service", "web"}});
  CHECK(
      m["spec"]["ports"] ==
      json::array(
          {{{"name", "service"}, {"port", 8080}, {"targetPort", "service"}, {"protocol", "TCP"}}}));
  // No port to publish (a file probe): a headless Service may have none.
  CHECK_FALSE(
      service_manifest(web_service(ProbeKind::file), "run-1", "t", "n")["spec"].contains("ports"));
}

TEST_CASE("PodSpec.ServiceNamesAndLabelsStayValidAndApart") {
  auto dns_label = [](const std::string& n) {
    bool ok =
        !n.empty() && n.size() <= 63 && n.front() >= 'a' && n.front() <= 'z' && n.back() != '-';
    for (char c : n) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    return ok;
  };
  for (const char* name :
       {"web", "My Model", "my model", "a_b", "a.b", "--x--", "\xc3\xa9t\xc3\xa9"}) {
    INFO(name);
    CHECK(dns_label(service_object_name("sweep-1", name)));
    CHECK(dns_label(service_object_name(std::string(90, 'R'), name)));
    std::string l = service_label(name);
    CHECK(!l.empty());
    CHECK(l.size() <= 63);
  }
  CHECK(service_object_name("sweep-1", "web") == "chorus-sweep-1-web");
  CHECK(service_label("web") == "web");
  CHECK(service_label("a_b.c-1") == "a_b.c-1");  // valid label values stay as they are
  // Names that Kubernetes' rules would fold together stay apart.
  CHECK(service_object_name("r", "My Model") != service_object_name("r", "my model"));
  CHECK(service_object_name("r", "a_b") != service_object_name("r", "a-b"));
  CHECK(service_label("a b") != service_label("a-b"));
  std::string long_name(100, 'm');
  CHECK(service_label(long_name) != service_label(long_name + "n"));
  auto far = service_object_name(std::string(90, 'R'), "web");
  CHECK(far.substr(far.size() - 4) == "-web");
}

TEST_CASE("PodSpec.ReadinessComesFromThePodIpAndItsReadyCondition") {
  auto pod = [](const char* phase, const char* ip, const char* ready) {
    json status = {{"phase", phase}};
    if (*ip != '\0') status["podIP"] = ip;
    status["conditions"] = json::array({{{"type", "Ready"}, {"status", ready}}});
    return json{{"metadata", {{"name", "chorus-r-3-1"}}}, {"status", status}};
  };
  auto up = pod_readiness(pod("Running", "10.244.1.7", "True"));
  CHECK(up.ready);
  CHECK(up.address == "10.244.1.7");
  auto running = pod_readiness(pod("Running", "10.244.1.7", "False"));
  CHECK_FALSE(running.ready);
  CHECK(running.detail ==
        "its Pod chorus-r-3-1 (10.244.1.7) runs but is not Ready: its readinessProbe has not "
        "passed");
  json creating = pod("Pending", "", "False");
  creating["status"]["containerStatuses"] =
      json::array({{{"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}});
  auto pending = pod_readiness(creating);
  CHECK_FALSE(pending.ready);
  CHECK(pending.detail == "its Pod chorus-r-3-1 is Pending (ContainerCreating), without an IP yet");
  // Ready without an IP cannot be used (never seen, but not an endpoint either).
  CHECK(pod_readiness(pod("Running", "", "True")).detail.find("chorus-r-3-1") != std::string::npos);
}

TEST_CASE("PodSpec.AResumedRunAdoptsOnlyTheAttemptBeforeStillRunningOrSucceeded") {
  TaskSpec s;
  s.id = 3;
  s.name = "long";
  s.cmd.shell = "sleep 60";
  s.image = "localhost/busybox:1.35";
  LaunchRequest r;
  r.spec = &s;
  r.attempt = 1;
  r.node = "n1";
  auto m = pod_manifest(r, naming("run-1", "0123456789abcdef0123456789abcdef", ""), "p");
  CHECK(m["metadata"]["labels"]["chorus.token"] == "0123456789abcdef0123456789abcdef");
  CHECK(m["metadata"]["annotations"]["chorus.task-name"] == "long");
  CHECK(m["metadata"]["annotations"]["chorus.kind"] == "executable");
  auto with = [&](json status) {
    json p = m;
    p["status"] = std::move(status);
    return p;
  };
  json running = with({{"phase", "Running"}});
  CHECK(adoptable(running, s, 2));
  CHECK_FALSE(adoptable(running, s, 3));  // not the attempt the coordinator left
  CHECK_FALSE(adoptable(running, s, 1));
  json succeeded = with(
      {{"phase", "Succeeded"},
       {"containerStatuses", json::array({{{"state", {{"terminated", {{"exitCode", 0}}}}}}})}});
  CHECK(adoptable(succeeded, s, 2));
  json failed = with(
      {{"phase", "Failed"},
       {"containerStatuses", json::array({{{"state", {{"terminated", {{"exitCode", 2}}}}}}})}});
  CHECK_FALSE(adoptable(failed, s, 2));  // runs again, as a retry would
  json deleting = running;
  deleting["metadata"]["deletionTimestamp"] = "2026-12-02T10:00:00Z";
  CHECK_FALSE(adoptable(deleting, s, 2));
  TaskSpec changed = s;
  changed.cmd.shell = "sleep 61";  // the workflow changed: the old Pod runs the old command
  CHECK_FALSE(adoptable(running, changed, 2));
  TaskSpec service = s;
  service.kind = TaskKind::service;
  CHECK_FALSE(adoptable(running, service, 2));
}

TEST_CASE("PodSpec.TheCoordinatorsPodOwnsTheRunsPodsAndServices") {
  TaskSpec s;
  LaunchRequest r = true_task(s, 1);
  OwnerPod owner{"chorus-dag-x7k2q", "5f0c-uid"};
  json expected = json::array(
      {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "chorus-dag-x7k2q"}, {"uid", "5f0c-uid"}}});
  auto pod = pod_manifest(r, naming("run-1", "tok", "i", owner), "p");
  CHECK(pod["metadata"]["ownerReferences"] == expected);
  auto svc = service_manifest(web_service(ProbeKind::tcp), "run-1", "tok", "n", owner);
  CHECK(svc["metadata"]["ownerReferences"] == expected);
  // Half an owner (a name without its uid) is none: the API refuses a reference without a uid.
  CHECK(owner_references({"chorus-dag-x7k2q", ""}).is_null());
}

TEST_CASE("PodSpec.AWorkdirClaimIsMountedInsteadOfTheNodesDirectory") {
  TaskSpec s;
  LaunchRequest r = true_task(s, 2);
  r.workdir = "/work/sub";  // a task's own workdir below the claim's mount
  PodNaming n = naming("run-1", "tok", "i");
  n.workdir_claim = {"shared", "/work"};
  auto m = pod_manifest(r, n, "p");
  CHECK(m["spec"]["volumes"] ==
        json::array({{{"name", "workdir"}, {"persistentVolumeClaim", {{"claimName", "shared"}}}}}));
  const auto& c = m["spec"]["containers"][0];
  CHECK(c["volumeMounts"] == json::array({{{"name", "workdir"}, {"mountPath", "/work"}}}));
  CHECK(c["workingDir"] == "/work/sub");
  // A working directory off the claim keeps its hostPath; /workshop is not below /work.
  r.workdir = "/workshop";
  auto off = pod_manifest(r, n, "p");
  CHECK(off["spec"]["volumes"][0]["hostPath"]["path"] == "/workshop");
  CHECK(path_within("/work", "/work"));
  CHECK(path_within("/work/a/b", "/work"));
  CHECK_FALSE(path_within("/workshop", "/work"));
  CHECK(path_within("/x", "/"));
}
