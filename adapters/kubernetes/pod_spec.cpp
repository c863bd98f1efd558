#include "adapters/kubernetes/pod_spec.hpp"

#include <cctype>

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
    container["volumeMounts"] = json::array({{{"name", "workdir"}, {"mountPath", r.workdir}}});
    spec["volumes"] =
        json::array({{{"name", "workdir"},
                      {"hostPath", {{"path", r.workdir}, {"type", "DirectoryOrCreate"}}}}});
  }
  if (s.kill_grace.count() > 0)
    spec["terminationGracePeriodSeconds"] = std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(s.kill_grace).count());
  spec["containers"].push_back(container);
  json labels = {{"chorus.run", naming.run},
                 {"chorus.task", std::to_string(s.id)},
                 {"chorus.attempt", std::to_string(r.attempt)}};
  if (!naming.token.empty()) labels["chorus.token"] = naming.token;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"labels", labels},
            {"annotations",
             {{"chorus.task-name", s.name},
              {"chorus.fingerprint", std::to_string(spec_fingerprint(s))},
              {"chorus.kind", to_string(s.kind)}}}}},
          {"spec", spec}};
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

}  // namespace chorus::kube
