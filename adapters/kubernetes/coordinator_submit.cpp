#include "adapters/kubernetes/coordinator_submit.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "adapters/kubernetes/pod_spec.hpp"

namespace chorus::kube {

std::string Right::text() const {
  return verb + " " + resource + (subresource.empty() ? "" : "/" + subresource);
}

std::vector<Right> coordinator_rights() {
  return {{"create", "pods", "", false}, {"get", "pods", "", false},
          {"list", "pods", "", false},   {"watch", "pods", "", false},
          {"delete", "pods", "", false}, {"deletecollection", "pods", "", false},
          {"patch", "pods", "", false},  {"get", "pods", "log", false},
          {"list", "nodes", "", true}};
}

namespace {

const char* kRbacHint =
    "deploy/k8s/rbac.yaml in the chorus sources has the ServiceAccount 'chorus' and exactly the "
    "rights it needs: set its `namespace:` fields to yours, then kubectl apply -f it; "
    "docs/kubernetes.md";

}  // namespace

Status check_service_account(KubeClient& client, const std::string& namespace_name,
                             const std::string& account) {
  auto r =
      client.raw("GET", "/api/v1/namespaces/" + namespace_name + "/serviceaccounts/" + account);
  if (!r) return r.status();
  if (r->code == 404)
    return not_found("service account '" + account + "' does not exist in namespace '" +
                     namespace_name + "' on " + client.config().server +
                     ": the coordinator Pod runs as it. Create it with its Role and bindings (" +
                     kRbacHint + "), or pass --service-account NAME");
  if (r->code == 200 || r->code == 403) return Status::ok_status();
  return http_error(*r, "read service account " + account + " in namespace " + namespace_name,
                    client.config());
}

Status check_volume_claim(KubeClient& client, const std::string& namespace_name,
                          const std::string& claim, std::vector<std::string>& notes) {
  auto r = client.raw("GET",
                      "/api/v1/namespaces/" + namespace_name + "/persistentvolumeclaims/" + claim);
  if (!r) return r.status();
  if (r->code == 404)
    return not_found("PersistentVolumeClaim '" + claim + "' does not exist in namespace '" +
                     namespace_name + "' on " + client.config().server +
                     ": the coordinator and its task Pods mount it as the working directory. "
                     "Create it (ReadWriteMany, so Pods on every node can mount it), or drop "
                     "--volume-claim to use the nodes' own directory (hostPath)");
  if (r->code == 403) return Status::ok_status();
  if (r->code != 200)
    return http_error(*r, "read persistentvolumeclaim " + claim + " in namespace " + namespace_name,
                      client.config());
  auto pvc = nlohmann::json::parse(r->body, nullptr, false);
  if (pvc.is_discarded()) return Status::ok_status();
  const std::string phase = pvc.value("status", nlohmann::json::object()).value("phase", "");
  if (phase != "Bound")
    notes.push_back("PersistentVolumeClaim '" + claim + "' is " +
                    (phase.empty() ? std::string("not bound") : phase) +
                    ": the coordinator Pod waits until it is bound to a volume");
  const auto modes =
      pvc.value("spec", nlohmann::json::object()).value("accessModes", nlohmann::json::array());
  bool many = false;
  for (const auto& m : modes) many = many || m == "ReadWriteMany";
  if (!many)
    notes.push_back("PersistentVolumeClaim '" + claim + "' is not ReadWriteMany (" + modes.dump() +
                    "): task Pods on another node than the coordinator may fail to mount it");
  return Status::ok_status();
}

Status check_service_account_rights(KubeClient& client, const std::string& namespace_name,
                                    const std::string& account) {
  std::string user = "system:serviceaccount:" + namespace_name + ":" + account;
  std::string refused;
  for (const auto& right : coordinator_rights()) {
    nlohmann::json attributes = {{"verb", right.verb}, {"resource", right.resource}};
    if (!right.subresource.empty()) attributes["subresource"] = right.subresource;
    if (!right.cluster_scoped) attributes["namespace"] = namespace_name;
    nlohmann::json review = {
        {"apiVersion", "authorization.k8s.io/v1"},
        {"kind", "SubjectAccessReview"},
        {"spec",
         {{"user", user},
          {"groups",
           {"system:serviceaccounts", "system:serviceaccounts:" + namespace_name,
            "system:authenticated"}},
          {"resourceAttributes", attributes}}}};
    auto r =
        client.raw("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review.dump());
    if (!r) return r.status();
    // The submitter may not ask (or the server does not serve reviews): unchecked.
    if (r->code == 403 || r->code == 404) return Status::ok_status();
    if (r->code < 200 || r->code >= 300)
      return http_error(*r, "review the rights of " + user, client.config());
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    bool allowed = !j.is_discarded() && j.contains("status") && j["status"].is_object() &&
                   j["status"].value("allowed", false);
    if (!allowed) refused += (refused.empty() ? "" : ", ") + right.text();
  }
  if (refused.empty()) return Status::ok_status();
  return invalid_argument("service account '" + account + "' in namespace '" + namespace_name +
                          "' may not " + refused +
                          ", which the coordinator Pod needs: bind it to a Role and ClusterRole "
                          "granting them (" +
                          kRbacHint + ")");
}

Status check_no_live_coordinator(KubeClient& client, const std::string& namespace_name,
                                 const std::string& state_dir, const std::string& run) {
  auto listed = client.request(
      "GET",
      "/api/v1/namespaces/" + namespace_name + "/pods?labelSelector=chorus.role%3Dcoordinator",
      nullptr, "list pods in namespace " + namespace_name);
  if (!listed) return listed.status();
  for (const auto& pod : listed->value("items", nlohmann::json::array())) {
    if (!drives_state(pod, state_dir)) continue;
    const std::string name = pod["metadata"].value("name", "");
    return Status(ErrorCode::unavailable,
                  "the coordinator Pod " + name + " is still running on the journal " + state_dir +
                      ": resuming " + run +
                      " beside it would run its tasks twice. Stop it first (kubectl -n " +
                      namespace_name + " delete pod " + name + "), or wait for it to end");
  }
  return {};
}

Result<CreatedCoordinator> create_coordinator(KubeClient& client, const CoordinatorPod& pod) {
  const std::string ns_path = "/api/v1/namespaces/" + pod.namespace_name;
  const std::string cm_path = ns_path + "/configmaps/" + pod.name;
  auto forget_configmap = [&] { (void)client.raw("DELETE", cm_path); };

  nlohmann::json cm = coordinator_configmap(pod);
  auto made = client.request("POST", ns_path + "/configmaps", &cm,
                             "create configmaps in namespace " + pod.namespace_name);
  if (!made) return made.status();

  const std::string manifest = coordinator_pod_manifest(pod).dump();
  const std::string what = "create pods in namespace " + pod.namespace_name;
  Result<Response> answer = Status(ErrorCode::internal, "not sent");
  // A service account created moments ago has no token yet (Kubernetes < 1.24: the token
  // controller adds its secret); ServiceAccount admission refuses the Pod until then. Waited
  // for up to 10 s, as after `kubectl apply -f deploy/k8s/rbac.yaml && chorus submit ...`.
  for (int attempt = 0;; ++attempt) {
    answer = client.raw("POST", ns_path + "/pods", manifest);
    bool no_token_yet = answer && answer->code >= 500 &&
                        answer->body.find("No API token found") != std::string::npos;
    if (!no_token_yet || attempt >= 20) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  Result<nlohmann::json> created = Status(ErrorCode::internal, "not sent");
  if (!answer)
    created = answer.status();
  else if (answer->code < 200 || answer->code >= 300)
    created = http_error(*answer, what, client.config());
  else
    created = nlohmann::json::parse(answer->body, nullptr, false);
  if (created && created->is_discarded())
    created = Status(ErrorCode::internal, "the API server's answer to " + what + " is not JSON");
  if (!created) {
    forget_configmap();
    return created.status();
  }
  CreatedCoordinator out;
  out.name = (*created)["metadata"].value("name", pod.name);
  out.uid = (*created)["metadata"].value("uid", "");

  auto patched = client.raw("PATCH", cm_path, owner_patch(out.name, out.uid).dump(),
                            "application/merge-patch+json");
  Status s;
  if (!patched)
    s = patched.status();
  else if (patched->code < 200 || patched->code >= 300)
    s = http_error(*patched, "patch configmap " + pod.name + " in namespace " + pod.namespace_name,
                   client.config());
  if (!s.ok()) {
    // Without its owner the ConfigMap would outlive the Pod: undo the submission.
    (void)client.raw("DELETE", ns_path + "/pods/" + out.name + "?gracePeriodSeconds=1");
    forget_configmap();
    return s;
  }
  return out;
}

Result<CoordinatorStart> wait_for_start(KubeClient& client, const std::string& namespace_name,
                                        const std::string& name,
                                        std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  const std::string path = "/api/v1/namespaces/" + namespace_name + "/pods/" + name;
  CoordinatorStart start;
  for (;;) {
    auto pod = client.request("GET", path, nullptr,
                              "read pod " + name + " in namespace " + namespace_name);
    if (!pod) return pod.status();
    start.node = (*pod)["spec"].value("nodeName", "");
    const auto status = pod->value("status", nlohmann::json::object());
    std::string phase = status.value("phase", "");
    if (auto outcome = pod_outcome(*pod)) {
      bool ok = outcome->kind == UpdateKind::exited && outcome->exit_code == 0;
      start.state = ok ? CoordinatorStart::State::succeeded : CoordinatorStart::State::failed;
      start.exit_code = outcome->exit_code;
      start.message = outcome->message;
      return start;
    }
    if (phase == "Running") {
      start.state = CoordinatorStart::State::running;
      return start;
    }
    start.message = phase.empty() ? "Pending" : phase;
    if (Clock::now() >= deadline) return start;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace chorus::kube
