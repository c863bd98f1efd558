// One attempt as a Pod and a Pod's status as an outcome (adapters/kubernetes/pod_spec.*): what the
// real cluster's tests (tests/k8s/) rely on, case by case, with Pod objects as the API writes them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/pod_spec.hpp"

using namespace chorus;
using namespace chorus::kube;
using nlohmann::json;

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
  auto m = pod_manifest(r, {"run-1", "", ""}, pod_name("run-1", 7, 2));
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
  auto m = pod_manifest(r, {"run-1", "0123456789abcdef0123456789abcdef", ""}, "p");
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
