// One task attempt as a Pod, and a Pod's status as a task outcome: the pure half of the Pod
// launcher (no requests), unit-tested without a cluster.
//
// Contract:
// - pod_manifest: restartPolicy Never; labels chorus.run, chorus.task, chorus.attempt (the
//   run's id, the task's id, the attempt: what --resume and cancel select by); nodeName = the
//   node placement chose; requests = limits = the task's cores, memory (Mi) and gpus
//   (nvidia.com/gpu); env = spec env + sweep params + the coordinator's CHORUS_*; the run's
//   working directory mounted at the same path (hostPath) as workingDir, so the files a task
//   reads and writes are where the other backends put them; with a WorkdirClaim, that claim
//   mounted at its path instead, for every task whose working directory is on it. Output goes
//   to the Pod's log.
//   Label chorus.token and annotations chorus.task-name, chorus.fingerprint, chorus.kind are
//   what a resumed run finds its Pods by (adoptable()).
//   A service replica (LaunchRequest::service set) also gets its readiness probe as the
//   container's readinessProbe (readiness_probe()), its port as containerPort "service", and the
//   labels chorus.service (service_object.hpp's service_label()) and chorus.replica, which its
//   Service object selects.
// - pod_outcome: nullopt while the Pod may still run; else the update (exit code and
//   Kubernetes' reason in the message: OOMKilled, ErrImageNeverPull, Evicted, ...).
// - pod_readiness: a service replica's Pod IP and Ready condition, as the watch last saw them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/launcher.hpp"

namespace chorus::kube {

// The Pod a run's coordinator runs in (`chorus submit --kubernetes`): the run's Pods and Services
// name it as their owner, so Kubernetes' garbage collector deletes them with it, also when the
// coordinator could not act (the Pod force-deleted, its node gone). Empty: none (the coordinator
// runs outside the cluster).
struct OwnerPod {
  std::string name;
  std::string uid;
  bool empty() const { return name.empty() || uid.empty(); }
};

// `inner` is the directory `outer` or below it (both absolute, normalised; no "..").
bool path_within(const std::string& inner, const std::string& outer);

// metadata.ownerReferences naming `owner` (null when it is empty).
nlohmann::json owner_references(const OwnerPod& owner);

// A PersistentVolumeClaim that holds the run's working directory (`chorus submit --kubernetes
// --volume-claim`): mounted at `mount_path` in the coordinator's Pod and in every task Pod,
// instead of a hostPath of the node's file system. Empty: hostPath.
struct WorkdirClaim {
  std::string claim;
  std::string mount_path;  // absolute
  bool empty() const { return claim.empty(); }
};

struct PodNaming {
  std::string run;  // the chorus.run label value (the run's id, made a valid label)
  // The chorus.token label value: the run's random token (RunInfo::token). Run ids repeat
  // across state folders, tokens do not, so the launcher selects its Pods by this label.
  std::string token;
  std::string default_image;
  OwnerPod owner;
  WorkdirClaim workdir_claim;
  // The run's stop grace for a task without its own (TaskSpec::kill_grace): the Pod's
  // terminationGracePeriodSeconds, so a deletion by anyone else (the garbage collector after a
  // dead coordinator's Pod, kubectl) waits as long as the launcher's own would, not
  // Kubernetes' 30 s. 0: Kubernetes' default.
  Duration default_grace{0};
};

// "chorus-<run>-<task>-<attempt>", lowercased and cut to Kubernetes' 63 characters.
std::string pod_name(const std::string& run_label, TaskId task, std::uint32_t attempt);
// The name of the `k`-th Pod made again for the attempt named `pod` (pod_launcher.hpp,
// kubelet_refused): `pod` + "-r<k>", the run part cut so it stays within 63 characters.
std::string readmit_name(const std::string& pod, int k);
// A label value from any text: [A-Za-z0-9._-], alphanumeric at both ends, at most 63.
std::string label_value(const std::string& text);

// The container port replica `replica` of `service` listens on (tcp/http probes: port + replica),
// 0 when its probe has none.
int service_port(const ServiceSpec& service, int replica);

// core/service_spec's ReadyProbe as a Kubernetes probe: tcp -> tcpSocket, http -> httpGet (path,
// port), file -> exec `test -e <path>` (a relative path under `workdir`; the image needs `test`),
// every interval (periodSeconds, at least 1) with a 2 s answer limit (timeoutSeconds, as the
// coordinator's own probe). stdout: null, Kubernetes cannot express it (stdout_probe_problem()).
nlohmann::json readiness_probe(const ReadyProbe& probe, int port, const std::string& workdir);

// Why the replicas of `service` cannot run as Pods, or "" (a stdout probe: Kubernetes would call
// the Pod Ready before chorus does; the loader refuses it at its file:line:col).
std::string stdout_probe_problem(const ServiceSpec& service);

nlohmann::json pod_manifest(const LaunchRequest& r, const PodNaming& naming,
                            const std::string& name);

struct PodOutcome {
  UpdateKind kind = UpdateKind::exited;
  int exit_code = 0;
  std::string message;
};
std::optional<PodOutcome> pod_outcome(const nlohmann::json& pod);
// Whether the node's kubelet refused to admit the Pod for lack of a resource (phase Failed,
// reason OutOfcpu, OutOfmemory, OutOfpods, OutOf<resource>; no container ever ran). Seen here
// when another workload's Pods (a Job's, placed by kube-scheduler) held cores on the nodes of a
// run: Chorus books only its own Pods against a node's allocatable.
bool kubelet_refused(const nlohmann::json& pod);

// A service replica's Pod as the watch saw it: its IP, whether its Ready condition is True (the
// kubelet's readinessProbe passed), and else why not, naming the Pod.
struct PodReadiness {
  std::string address;  // status.podIP, "" before the Pod has one
  bool ready = false;
  std::string detail;
};
PodReadiness pod_readiness(const nlohmann::json& pod);

// Whether `pod` (listed before this session created any) is what a killed coordinator left of
// the task now launched as `attempt`: the same task name and fingerprint (annotations), attempt
// - 1, not being deleted, and still running or succeeded. A failed one is not adopted (the task
// runs again, as a retry would, and what succeeded never reruns); neither is a service replica
// (services restart on resume, as on every backend).
bool adoptable(const nlohmann::json& pod, const TaskSpec& spec, std::uint32_t attempt);

}  // namespace chorus::kube
