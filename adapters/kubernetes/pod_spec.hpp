// One task attempt as a Pod, and a Pod's status as a task outcome: the pure half of the Pod
// launcher (no requests), unit-tested without a cluster.
//
// Contract:
// - pod_manifest: restartPolicy Never; labels chorus.run, chorus.task, chorus.attempt (the
//   run's id, the task's id, the attempt: what --resume and cancel select by); nodeName = the
//   node placement chose; requests = limits = the task's cores, memory (Mi) and gpus
//   (nvidia.com/gpu); env = spec env + sweep params + the coordinator's CHORUS_*; the run's
//   working directory mounted at the same path (hostPath) as workingDir, so the files a task
//   reads and writes are where the other backends put them. Output goes to the Pod's log.
//   Label chorus.token and annotations chorus.task-name, chorus.fingerprint, chorus.kind are
//   what a resumed run finds its Pods by (adoptable()).
// - pod_outcome: nullopt while the Pod may still run; else the update (exit code and
//   Kubernetes' reason in the message: OOMKilled, ErrImageNeverPull, Evicted, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/launcher.hpp"

namespace chorus::kube {

struct PodNaming {
  std::string run;  // the chorus.run label value (the run's id, made a valid label)
  // The chorus.token label value: the run's random token (RunInfo::token). Run ids repeat
  // across state folders, tokens do not, so the launcher selects its Pods by this label.
  std::string token;
  std::string default_image;
};

// "chorus-<run>-<task>-<attempt>", lowercased and cut to Kubernetes' 63 characters.
std::string pod_name(const std::string& run_label, TaskId task, std::uint32_t attempt);
// A label value from any text: [A-Za-z0-9._-], alphanumeric at both ends, at most 63.
std::string label_value(const std::string& text);

nlohmann::json pod_manifest(const LaunchRequest& r, const PodNaming& naming,
                            const std::string& name);

struct PodOutcome {
  UpdateKind kind = UpdateKind::exited;
  int exit_code = 0;
  std::string message;
};
std::optional<PodOutcome> pod_outcome(const nlohmann::json& pod);

// Whether `pod` (listed before this session created any) is what a killed coordinator left of
// the task now launched as `attempt`: the same task name and fingerprint (annotations), attempt
// - 1, not being deleted, and still running or succeeded. A failed one is not adopted (the task
// runs again, as a retry would, and what succeeded never reruns); neither is a service replica
// (services restart on resume, as on every backend).
bool adoptable(const nlohmann::json& pod, const TaskSpec& spec, std::uint32_t attempt);

}  // namespace chorus::kube
