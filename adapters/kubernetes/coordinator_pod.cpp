#include "adapters/kubernetes/coordinator_pod.hpp"

#include <cctype>

#include "adapters/kubernetes/pod_spec.hpp"

namespace chorus::kube {

std::optional<ApiAddress> loopback_api_server(const std::string& server) {
  std::string rest = server;
  for (const char* scheme : {"https://", "http://"})
    if (rest.rfind(scheme, 0) == 0) rest = rest.substr(std::string(scheme).size());
  rest = rest.substr(0, rest.find('/'));
  ApiAddress a;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string::npos) return std::nullopt;
    a.host = rest.substr(1, close - 1);
    if (rest.size() > close + 1 && rest[close + 1] == ':') a.port = rest.substr(close + 2);
  } else {
    auto colon = rest.rfind(':');
    a.host = rest.substr(0, colon);
    if (colon != std::string::npos) a.port = rest.substr(colon + 1);
  }
  if (a.port.empty()) a.port = "443";
  for (char c : a.port)
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
  bool loopback = a.host == "localhost" || a.host == "::1" || a.host.rfind("127.", 0) == 0;
  if (!loopback) return std::nullopt;
  return a;
}

std::string coordinator_pod_name(const std::string& workflow_name, const std::string& suffix) {
  std::string base;
  for (char c : workflow_name) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok || (!base.empty() && base.back() != '-')) base.push_back(ok ? l : '-');
  }
  std::size_t room = 63 - std::string("chorus--").size() - suffix.size();
  if (base.size() > room) base.resize(room);
  while (!base.empty() && base.back() == '-') base.pop_back();
  return "chorus-" + (base.empty() ? std::string("workflow") : base) + "-" + suffix;
}

std::string workflow_key(const std::string& file_name) {
  bool ok = !file_name.empty() && file_name.size() <= 253 && file_name != "." && file_name != "..";
  for (char c : file_name)
    ok = ok &&
         (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_');
  return ok ? file_name : "workflow.yaml";
}

namespace {

nlohmann::json labels(const CoordinatorPod& c) {
  return {{kSubmissionLabel, c.name}, {"chorus.role", "coordinator"}};
}

nlohmann::json host_dir(const std::string& name, const std::string& path) {
  return {{"name", name}, {"hostPath", {{"path", path}, {"type", "DirectoryOrCreate"}}}};
}

// The run's working directory: the claim when there is one, else the node's directory.
nlohmann::json workdir_volume(const CoordinatorPod& c) {
  if (c.volume_claim.empty()) return host_dir("workdir", c.workdir);
  return {{"name", "workdir"}, {"persistentVolumeClaim", {{"claimName", c.volume_claim}}}};
}

}  // namespace

nlohmann::json coordinator_configmap(const CoordinatorPod& c) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", c.name},
            {"labels", labels(c)},
            {"annotations", {{"chorus.workflow", c.workflow_source}}}}},
          {"data", {{c.workflow_key, c.workflow_text}}}};
}

nlohmann::json coordinator_pod_manifest(const CoordinatorPod& c) {
  using nlohmann::json;
  json command = {
      "chorus",         "run",        std::string(kWorkflowMount) + "/" + c.workflow_key,
      "--backend",      "kubernetes", "--namespace",
      c.namespace_name, "--state",    c.state_dir,
      "--grace",        c.grace};
  if (!c.resume_run.empty()) command.insert(command.end(), {"--resume", c.resume_run});
  if (!c.volume_claim.empty()) command.insert(command.end(), {"--workdir-claim", c.volume_claim});
  // Its own name and uid, from the downward API: the owner of the run's Pods (pod_spec.hpp).
  json env = json::array({{{"name", "CHORUS_SUBMISSION"}, {"value", c.name}},
                          {{"name", "CHORUS_OWNER_POD"},
                           {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
                          {{"name", "CHORUS_OWNER_POD_UID"},
                           {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}}});
  if (c.api) {
    env.push_back({{"name", "KUBERNETES_SERVICE_HOST"}, {"value", c.api->host}});
    env.push_back({{"name", "KUBERNETES_SERVICE_PORT"}, {"value", c.api->port}});
  }
  json mounts =
      json::array({{{"name", "workflow"}, {"mountPath", kWorkflowMount}, {"readOnly", true}},
                   {{"name", "workdir"}, {"mountPath", c.workdir}}});
  json volumes =
      json::array({{{"name", "workflow"}, {"configMap", {{"name", c.name}}}}, workdir_volume(c)});
  if (!path_within(c.state_dir, c.workdir)) {
    mounts.push_back({{"name", "state"}, {"mountPath", c.state_dir}});
    volumes.push_back(host_dir("state", c.state_dir));
  }
  json container = {
      {"name", "coordinator"},
      {"image", c.image},
      {"imagePullPolicy", c.image_pull_policy.empty() ? "IfNotPresent" : c.image_pull_policy},
      {"command", command},
      {"workingDir", c.workdir},
      {"env", env},
      {"volumeMounts", mounts}};
  json spec = {{"restartPolicy", "Never"},
               {"serviceAccountName", c.service_account},
               {"automountServiceAccountToken", true},
               {"enableServiceLinks", false},
               {"terminationGracePeriodSeconds", c.termination_grace_seconds},
               {"containers", json::array({container})},
               {"volumes", volumes}};
  if (c.api) {
    spec["hostNetwork"] = true;
    spec["dnsPolicy"] = "ClusterFirstWithHostNet";
  }
  if (c.deadline_seconds > 0) spec["activeDeadlineSeconds"] = c.deadline_seconds;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", c.name},
            {"labels", labels(c)},
            {"annotations", {{"chorus.workflow", c.workflow_source}}}}},
          {"spec", spec}};
}

bool drives_state(const nlohmann::json& pod, const std::string& state_dir) {
  const auto metadata = pod.value("metadata", nlohmann::json::object());
  if (metadata.value("labels", nlohmann::json::object()).value("chorus.role", "") != "coordinator")
    return false;
  const std::string phase = pod.value("status", nlohmann::json::object()).value("phase", "");
  if (phase == "Succeeded" || phase == "Failed" || metadata.contains("deletionTimestamp"))
    return false;
  const auto spec = pod.value("spec", nlohmann::json::object());
  for (const auto& container : spec.value("containers", nlohmann::json::array())) {
    const auto command = container.value("command", nlohmann::json::array());
    for (std::size_t i = 0; i + 1 < command.size(); ++i)
      if (command[i] == "--state" && command[i + 1] == state_dir) return true;
  }
  return false;
}

nlohmann::json owner_patch(const std::string& pod_name, const std::string& pod_uid) {
  return {{"metadata", {{"ownerReferences", owner_references({pod_name, pod_uid})}}}};
}

}  // namespace chorus::kube
