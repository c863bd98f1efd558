// The coordinator Pod of `chorus submit --kubernetes` and its ConfigMap
// (adapters/kubernetes/coordinator_pod.*), and the shipped RBAC manifest against the rights the
// backend uses (coordinator_submit.hpp): what tests/k8s/test_k8s_submit.cpp relies on.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "adapters/kubernetes/coordinator_pod.hpp"
#include "adapters/kubernetes/coordinator_submit.hpp"
#include "support/process.hpp"
#include "support/yaml_json.hpp"

using namespace chorus;
using namespace chorus::kube;
using nlohmann::json;

namespace {

CoordinatorPod sample() {
  CoordinatorPod c;
  c.name = "chorus-dag-x7k2q";
  c.namespace_name = "batch";
  c.image = "localhost/chorus:0.1.0";
  c.service_account = "chorus";
  c.workflow_key = "wf.yaml";
  c.workflow_text = "name: dag\n";
  c.workflow_source = "/home/u/wf.yaml";
  c.workdir = "/home/u";
  c.state_dir = "/home/u/.chorus";
  return c;
}

const json* env_of(const json& container, const std::string& name) {
  for (const auto& e : container["env"])
    if (e["name"] == name) return e.contains("value") ? &e["value"] : nullptr;
  return nullptr;
}

// The downward-API field an env variable is set from, or "" when it is not.
std::string field_of(const json& container, const std::string& name) {
  for (const auto& e : container["env"])
    if (e["name"] == name && e.contains("valueFrom"))
      return e["valueFrom"]["fieldRef"]["fieldPath"].get<std::string>();
  return "";
}

}  // namespace

TEST_CASE("CoordinatorPod.LoopbackServersAreRecognised") {
  auto a = loopback_api_server("https://127.0.0.1:16443");
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == "16443");
  CHECK(loopback_api_server("https://localhost")->port == "443");
  CHECK(loopback_api_server("https://[::1]:6443")->host == "::1");
  CHECK(loopback_api_server("https://127.0.0.2:6443/")->port == "6443");
  CHECK_FALSE(loopback_api_server("https://10.0.0.5:6443"));
  CHECK_FALSE(loopback_api_server("https://k8s.example.org:443"));
  CHECK_FALSE(loopback_api_server("https://[fd00::1]:6443"));
  CHECK_FALSE(loopback_api_server("https://127.0.0.1:port"));
}

TEST_CASE("CoordinatorPod.NamesAreDnsLabels") {
  CHECK(coordinator_pod_name("My DAG_v2", "x7k2q") == "chorus-my-dag-v2-x7k2q");
  CHECK(coordinator_pod_name("--", "x7k2q") == "chorus-workflow-x7k2q");
  std::string longest = coordinator_pod_name(std::string(100, 'a'), "x7k2q");
  CHECK(longest.size() == 63);
  CHECK(longest.ends_with("a-x7k2q"));
  CHECK(workflow_key("wf.yaml") == "wf.yaml");
  CHECK(workflow_key("my flow.yaml") == "workflow.yaml");
  CHECK(workflow_key("..") == "workflow.yaml");
}

TEST_CASE("CoordinatorPod.RunsChorusInClusterInTheSharedWorkdir") {
  json m = coordinator_pod_manifest(sample());
  CHECK(m["kind"] == "Pod");
  CHECK(m["metadata"]["name"] == "chorus-dag-x7k2q");
  CHECK(m["metadata"]["labels"][kSubmissionLabel] == "chorus-dag-x7k2q");
  const json& spec = m["spec"];
  CHECK(spec["restartPolicy"] == "Never");
  CHECK(spec["serviceAccountName"] == "chorus");
  CHECK_FALSE(spec.contains("hostNetwork"));
  CHECK_FALSE(spec.contains("nodeName"));  // the kube-scheduler places the coordinator
  CHECK_FALSE(spec.contains("activeDeadlineSeconds"));
  const json& c = spec["containers"][0];
  CHECK(c["image"] == "localhost/chorus:0.1.0");
  CHECK(c["imagePullPolicy"] == "IfNotPresent");
  CHECK(c["command"] ==
        json::array({"chorus", "run", "/etc/chorus/workflow/wf.yaml", "--backend", "kubernetes",
                     "--namespace", "batch", "--state", "/home/u/.chorus", "--grace", "5s"}));
  CHECK(c["workingDir"] == "/home/u");
  // No requests: task Pods are placed against each node's whole allocatable.
  CHECK_FALSE(c.contains("resources"));
  CHECK(env_of(c, "KUBERNETES_SERVICE_HOST") == nullptr);
  // Its own name and uid, which the run's Pods and Services name as their owner.
  CHECK(field_of(c, "CHORUS_OWNER_POD") == "metadata.name");
  CHECK(field_of(c, "CHORUS_OWNER_POD_UID") == "metadata.uid");
  // The workflow from its ConfigMap, the workdir (with the journal inside it) from the node.
  REQUIRE(spec["volumes"].size() == 2);
  CHECK(spec["volumes"][0]["configMap"]["name"] == "chorus-dag-x7k2q");
  CHECK(spec["volumes"][1]["hostPath"]["path"] == "/home/u");
  CHECK(c["volumeMounts"][0]["mountPath"] == "/etc/chorus/workflow");
  CHECK(c["volumeMounts"][1]["mountPath"] == "/home/u");
}

TEST_CASE("CoordinatorPod.AResumeContinuesTheRunAndOnlyALiveCoordinatorOfTheFolderBlocksIt") {
  CoordinatorPod c = sample();
  c.resume_run = "dag-3";
  json m = coordinator_pod_manifest(c);
  const json& command = m["spec"]["containers"][0]["command"];
  REQUIRE(command.size() == 13);
  CHECK(command[11] == "--resume");
  CHECK(command[12] == "dag-3");
  // The earlier coordinator of the same folder, while its Pod runs: a resume must wait.
  json running = m;
  running["status"] = {{"phase", "Running"}};
  CHECK(drives_state(running, "/home/u/.chorus"));
  CHECK_FALSE(drives_state(running, "/home/u/other/.chorus"));
  running["status"]["phase"] = "Failed";  // killed: its journal is free
  CHECK_FALSE(drives_state(running, "/home/u/.chorus"));
  running["status"]["phase"] = "Pending";
  running["metadata"]["deletionTimestamp"] = "2026-12-03T17:00:00Z";  // being deleted
  CHECK_FALSE(drives_state(running, "/home/u/.chorus"));
  json task = m;  // a task Pod never counts, whatever its command
  task["metadata"]["labels"] = {{"chorus.run", "dag-3"}};
  task["status"] = {{"phase", "Running"}};
  CHECK_FALSE(drives_state(task, "/home/u/.chorus"));
}

TEST_CASE("CoordinatorPod.AVolumeClaimHoldsTheWorkdirAndIsPassedToTheRun") {
  CoordinatorPod c = sample();
  c.workdir = "/work";
  c.state_dir = "/work/.chorus";
  c.volume_claim = "shared";
  json m = coordinator_pod_manifest(c);
  const json& spec = m["spec"];
  REQUIRE(spec["volumes"].size() == 2);  // the workflow, the claim; the journal is on it
  CHECK(spec["volumes"][1] ==
        json{{"name", "workdir"}, {"persistentVolumeClaim", {{"claimName", "shared"}}}});
  const json& command = spec["containers"][0]["command"];
  REQUIRE(command.size() == 13);
  CHECK(command[11] == "--workdir-claim");
  CHECK(command[12] == "shared");
  CHECK(spec["containers"][0]["workingDir"] == "/work");
}

TEST_CASE("CoordinatorPod.LoopbackApiServerMeansHostNetworkAndExplicitAddress") {
  CoordinatorPod c = sample();
  c.api = ApiAddress{"127.0.0.1", "16443"};
  c.deadline_seconds = 3600;
  c.image_pull_policy = "Never";
  json m = coordinator_pod_manifest(c);
  CHECK(m["spec"]["hostNetwork"] == true);
  CHECK(m["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet");
  CHECK(m["spec"]["activeDeadlineSeconds"] == 3600);
  const json& container = m["spec"]["containers"][0];
  CHECK(container["imagePullPolicy"] == "Never");
  REQUIRE(env_of(container, "KUBERNETES_SERVICE_HOST") != nullptr);
  CHECK(*env_of(container, "KUBERNETES_SERVICE_HOST") == "127.0.0.1");
  CHECK(*env_of(container, "KUBERNETES_SERVICE_PORT") == "16443");
}

TEST_CASE("CoordinatorPod.StateOutsideTheWorkdirIsAVolumeOfItsOwn") {
  CoordinatorPod c = sample();
  c.state_dir = "/srv/chorus-state";
  json m = coordinator_pod_manifest(c);
  REQUIRE(m["spec"]["volumes"].size() == 3);
  CHECK(m["spec"]["volumes"][2]["hostPath"]["path"] == "/srv/chorus-state");
  CHECK(m["spec"]["containers"][0]["volumeMounts"][2]["mountPath"] == "/srv/chorus-state");
  c.state_dir = "/home/user2";  // a sibling that shares the prefix is outside
  CHECK(coordinator_pod_manifest(c)["spec"]["volumes"].size() == 3);
}

TEST_CASE("CoordinatorPod.ConfigMapCarriesTheWorkflowAndIsOwnedByThePod") {
  json cm = coordinator_configmap(sample());
  CHECK(cm["kind"] == "ConfigMap");
  CHECK(cm["metadata"]["name"] == "chorus-dag-x7k2q");
  CHECK(cm["metadata"]["labels"][kSubmissionLabel] == "chorus-dag-x7k2q");
  CHECK(cm["metadata"]["annotations"]["chorus.workflow"] == "/home/u/wf.yaml");
  CHECK(cm["data"]["wf.yaml"] == "name: dag\n");
  json p = owner_patch("chorus-dag-x7k2q", "1234-abcd");
  const json& owner = p["metadata"]["ownerReferences"][0];
  CHECK(owner["kind"] == "Pod");
  CHECK(owner["apiVersion"] == "v1");
  CHECK(owner["name"] == "chorus-dag-x7k2q");
  CHECK(owner["uid"] == "1234-abcd");
}

TEST_CASE("CoordinatorPod.ShippedRbacGrantsEveryRightTheBackendUses") {
  std::set<std::string> namespaced, cluster;
  std::string bound_role, bound_cluster_role;
  for (const auto& doc :
       chorus::test::yaml_documents(chorus::test::source_dir() + "/deploy/k8s/rbac.yaml")) {
    std::string kind = doc.value("kind", "");
    if (kind == "Role" || kind == "ClusterRole") {
      for (const auto& rule : doc["rules"])
        for (const auto& resource : rule["resources"])
          for (const auto& verb : rule["verbs"])
            (kind == "Role" ? namespaced : cluster)
                .insert(verb.get<std::string>() + " " + resource.get<std::string>());
    }
    if (kind == "RoleBinding" || kind == "ClusterRoleBinding") {
      CHECK(doc["subjects"][0]["kind"] == "ServiceAccount");
      CHECK(doc["subjects"][0]["name"] == "chorus");
      (kind == "RoleBinding" ? bound_role : bound_cluster_role) = doc["roleRef"]["name"];
    }
  }
  CHECK(bound_role == "chorus-coordinator");
  CHECK(bound_cluster_role == "chorus-nodes");
  for (const auto& right : coordinator_rights()) {
    INFO(right.text());
    CHECK((right.cluster_scoped ? cluster : namespaced).count(right.text()) == 1);
  }
}
