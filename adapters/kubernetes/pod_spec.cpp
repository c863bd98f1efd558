#include "adapters/kubernetes/pod_spec.hpp"

#include <algorithm>
#include <cctype>

#include "adapters/kubernetes/service_object.hpp"

namespace chorus::kube {

std::string label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '-');
  }
  if (out.size() > 63) out = out.substr(out.size() - 63);  // the tail: ids end in their unique part
  while (!out.empty() && std::isalnum(static_cast<unsigned char>(out.front())) == 0)
    out.erase(0, 1);
  while (!out.empty() && std::isalnum(static_cast<unsigned char>(out.back())) == 0) out.pop_back();
  return out;
}

std::string pod_name(const std::string& run_label, TaskId task, std::uint32_t attempt) {
  std::string suffix = "-" + std::to_string(task) + "-" + std::to_string(attempt);
  std::string run;
  for (char c : run_label) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    run.push_back(std::isalnum(static_cast<unsigned char>(l)) != 0 ? l : '-');
  }
  std::size_t room = 63 - suffix.size() - 7;  // "chorus-"
  if (run.size() > room) run = run.substr(run.size() - room);
  while (!run.empty() && run.front() == '-') run.erase(0, 1);
  return "chorus-" + run + suffix;
}

std::string readmit_name(const std::string& pod, int k) {
  const std::string suffix = "-r" + std::to_string(k);
  constexpr std::size_t kHead = 7;  // "chorus-"
  std::string name = pod;
  if (name.size() + suffix.size() > 63 && name.size() > kHead) {
    const std::size_t cut = std::min(name.size() - kHead, name.size() + suffix.size() - 63);
    name.erase(kHead, cut);
    while (name.size() > kHead && name[kHead] == '-') name.erase(kHead, 1);
  }
  return name + suffix;
}

int service_port(const ServiceSpec& service, int replica) {
  const bool has_port =
      service.ready.kind == ProbeKind::tcp || service.ready.kind == ProbeKind::http;
  return has_port ? service.ready.port + replica : 0;
}

nlohmann::json readiness_probe(const ReadyProbe& probe, int port, const std::string& workdir) {
  using nlohmann::json;
  json out;
  switch (probe.kind) {
    case ProbeKind::tcp:
      out = {{"tcpSocket", {{"port", port}}}};
      break;
    case ProbeKind::http:
      out = {{"httpGet", {{"path", probe.path.empty() ? "/" : probe.path}, {"port", port}}}};
      break;
    case ProbeKind::file: {
      std::string path = probe.path;
      if (!path.empty() && path[0] != '/' && !workdir.empty()) path = workdir + "/" + path;
      out = {{"exec", {{"command", json::array({"test", "-e", path})}}}};
      break;
    }
    case ProbeKind::stdout_regex:
      return nullptr;
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(probe.interval).count();
  out["periodSeconds"] = std::max<std::int64_t>(1, (ms + 999) / 1000);
  out["timeoutSeconds"] = 2;
  out["successThreshold"] = 1;
  return out;
}

std::string stdout_probe_problem(const ServiceSpec& service) {
  if (service.ready.kind != ProbeKind::stdout_regex) return {};
  return "service '" + service.name +
         "' has a stdout probe, which Kubernetes cannot run as a readinessProbe; use a tcp, http "
         "or file probe";
}

bool path_within(const std::string& inner, const std::string& outer) {
  if (outer.empty() || inner.rfind(outer, 0) != 0) return false;
  return inner.size() == outer.size() || outer.back() == '/' || inner[outer.size()] == '/';
}

nlohmann::json owner_references(const OwnerPod& owner) {
  if (owner.empty()) return nullptr;
  return nlohmann::json::array(
      {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", owner.name}, {"uid", owner.uid}}});
}

nlohmann::json pod_manifest(const LaunchRequest& r, const PodNaming& naming,
                            const std::string& name) {
  using nlohmann::json;
  const TaskSpec& s = *r.spec;
  json env = json::array();
  auto add_env = [&](const KeyValues& kv) {
    for (const auto& [k, v] : kv) env.push_back({{"name", k}, {"value", v}});
  };
  add_env(s.env);
  add_env(s.params);
  add_env(r.env);
  json command = json::array();
  if (s.cmd.uses_shell()) {
    command = {"/bin/sh", "-c", s.cmd.shell};
  } else {
    for (const auto& a : s.cmd.argv) command.push_back(a);
  }
  Resources total = s.total();
  json amounts = {{"cpu", std::to_string(total.cores)}};
  if (total.memory_mb > 0) amounts["memory"] = std::to_string(total.memory_mb) + "Mi";
  if (total.gpus > 0) amounts["nvidia.com/gpu"] = std::to_string(total.gpus);
  json container = {{"name", "task"},
                    {"image", s.image.empty() ? naming.default_image : s.image},
                    {"command", command},
                    {"env", env},
                    {"resources", {{"requests", amounts}, {"limits", amounts}}}};
  if (!s.image_pull_policy.empty()) container["imagePullPolicy"] = s.image_pull_policy;
  json spec = {{"restartPolicy", "Never"},
               {"nodeName", r.node},
               {"enableServiceLinks", false},
               {"containers", json::array()}};
  if (!r.workdir.empty()) {
    container["workingDir"] = r.workdir;
    const WorkdirClaim& claim = naming.workdir_claim;
    if (!claim.empty() && path_within(r.workdir, claim.mount_path)) {
      container["volumeMounts"] =
          json::array({{{"name", "workdir"}, {"mountPath", claim.mount_path}}});
      spec["volumes"] = json::array(
          {{{"name", "workdir"}, {"persistentVolumeClaim", {{"claimName", claim.claim}}}}});
    } else {
      container["volumeMounts"] = json::array({{{"name", "workdir"}, {"mountPath", r.workdir}}});
      spec["volumes"] =
          json::array({{{"name", "workdir"},
                        {"hostPath", {{"path", r.workdir}, {"type", "DirectoryOrCreate"}}}}});
    }
  }
  const Duration grace = s.kill_grace.count() > 0 ? s.kill_grace : naming.default_grace;
  if (grace.count() > 0)
    spec["terminationGracePeriodSeconds"] =
        std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(grace).count());
  json labels = {{"chorus.run", naming.run},
                 {"chorus.task", std::to_string(s.id)},
                 {"chorus.attempt", std::to_string(r.attempt)}};
  if (!naming.token.empty()) labels["chorus.token"] = naming.token;
  if (r.service != nullptr && s.kind == TaskKind::service) {
    labels["chorus.service"] = service_label(r.service->name);
    labels["chorus.replica"] = std::to_string(s.replica);
    const int port = service_port(*r.service, s.replica);
    if (port > 0)
      container["ports"] =
          json::array({{{"name", "service"}, {"containerPort", port}, {"protocol", "TCP"}}});
    if (json probe = readiness_probe(r.service->ready, port, r.workdir); !probe.is_null())
      container["readinessProbe"] = probe;
  }
  spec["containers"].push_back(container);
  json metadata = {{"name", name},
                   {"labels", labels},
                   {"annotations",
                    {{"chorus.task-name", s.name},
                     {"chorus.fingerprint", std::to_string(spec_fingerprint(s))},
                     {"chorus.kind", to_string(s.kind)}}}};
  if (json owners = owner_references(naming.owner); !owners.is_null())
    metadata["ownerReferences"] = owners;
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", spec}};
}

bool adoptable(const nlohmann::json& pod, const TaskSpec& spec, std::uint32_t attempt) {
  if (spec.kind == TaskKind::service || attempt < 2 || !pod.is_object()) return false;
  const auto meta = pod.value("metadata", nlohmann::json::object());
  if (meta.contains("deletionTimestamp")) return false;
  const auto labels = meta.value("labels", nlohmann::json::object());
  const auto notes = meta.value("annotations", nlohmann::json::object());
  if (labels.value("chorus.attempt", "") != std::to_string(attempt - 1) ||
      notes.value("chorus.task-name", "") != spec.name ||
      notes.value("chorus.fingerprint", "") != std::to_string(spec_fingerprint(spec)))
    return false;
  auto outcome = pod_outcome(pod);
  return !outcome || (outcome->kind == UpdateKind::exited && outcome->exit_code == 0);
}

namespace {

// Waiting reasons that never resolve by themselves: the attempt fails now.
bool hopeless_waiting(const std::string& reason) {
  return reason == "ErrImageNeverPull" || reason == "ImagePullBackOff" ||
         reason == "ErrImagePull" || reason == "InvalidImageName" ||
         reason == "CreateContainerConfigError" || reason == "CreateContainerError" ||
         reason == "RunContainerError";
}

}  // namespace

std::optional<PodOutcome> pod_outcome(const nlohmann::json& pod) {
  const auto status = pod.value("status", nlohmann::json::object());
  std::string phase = status.value("phase", "");
  std::string reason = status.value("reason", "");
  std::string message = status.value("message", "");
  const auto statuses = status.value("containerStatuses", nlohmann::json::array());
  if (phase == "Failed" && (reason == "Evicted" || reason == "NodeLost" || reason == "Shutdown")) {
    return PodOutcome{UpdateKind::lost, 0,
                      "Kubernetes: " + reason + (message.empty() ? "" : ": " + message)};
  }
  for (const auto& c : statuses) {
    const auto state = c.value("state", nlohmann::json::object());
    if (state.contains("terminated") && (phase == "Succeeded" || phase == "Failed")) {
      const auto& t = state["terminated"];
      int code = t.value("exitCode", 0);
      std::string why = t.value("reason", "");
      PodOutcome o{UpdateKind::exited, code, {}};
      if (code != 0) {
        o.message = "exit code " + std::to_string(code);
        if (!why.empty() && why != "Error") o.message = why + " (" + o.message + ")";
        if (std::string m = t.value("message", ""); !m.empty()) o.message += ": " + m;
      }
      return o;
    }
    if (state.contains("waiting")) {
      std::string why = state["waiting"].value("reason", "");
      if (hopeless_waiting(why)) {
        std::string m = state["waiting"].value("message", "");
        return PodOutcome{UpdateKind::exited, 125,
                          "Kubernetes: " + why + " for image " + c.value("image", "?") +
                              (m.empty() ? "" : ": " + m)};
      }
    }
  }
  if (phase == "Succeeded") return PodOutcome{UpdateKind::exited, 0, {}};
  if (phase == "Failed")
    return PodOutcome{UpdateKind::exited, 1,
                      "Kubernetes: Pod failed" + (reason.empty() ? "" : ": " + reason) +
                          (message.empty() ? "" : ": " + message)};
  return std::nullopt;
}

bool kubelet_refused(const nlohmann::json& pod) {
  const auto status = pod.value("status", nlohmann::json::object());
  if (status.value("phase", "") != "Failed") return false;
  if (!status.value("reason", "").starts_with("OutOf")) return false;
  for (const auto& c : status.value("containerStatuses", nlohmann::json::array())) {
    const auto state = c.value("state", nlohmann::json::object());
    if (state.contains("running") || state.contains("terminated")) return false;
  }
  return true;
}

PodReadiness pod_readiness(const nlohmann::json& pod) {
  PodReadiness out;
  const auto status = pod.value("status", nlohmann::json::object());
  const std::string name = pod.contains("metadata") ? pod["metadata"].value("name", "?") : "?";
  out.address = status.value("podIP", "");
  for (const auto& c : status.value("conditions", nlohmann::json::array()))
    if (c.value("type", "") == "Ready") out.ready = c.value("status", "") == "True";
  if (out.ready && !out.address.empty()) return out;
  out.ready = false;
  const std::string phase = status.value("phase", "Pending");
  std::string waiting;
  for (const auto& c : status.value("containerStatuses", nlohmann::json::array()))
    if (c.contains("state") && c["state"].contains("waiting"))
      waiting = c["state"]["waiting"].value("reason", "");
  if (phase == "Running" && !out.address.empty()) {
    out.detail = "its Pod " + name + " (" + out.address +
                 ") runs but is not Ready: its readinessProbe has not passed";
  } else {
    out.detail = "its Pod " + name + " is " + phase + (waiting.empty() ? "" : " (" + waiting + ")");
    if (out.address.empty() && phase == "Pending") out.detail += ", without an IP yet";
  }
  return out;
}

}  // namespace chorus::kube
