// `chorus submit --kubernetes`: the coordinator itself as a Pod, and the ConfigMap that carries
// its workflow. The pure half (no requests), unit-tested without a cluster; the requests are in
// coordinator_submit.hpp.
//
// Contract:
// - The Pod runs `chorus run <mount>/<key> --backend kubernetes --namespace NS --state STATE`
//   with the Pod's service account (in-cluster config), in `workdir`: a hostPath mounted at the
//   same path, which is also the working directory its task Pods mount (pod_spec.hpp), so
//   relative paths of the workflow and the tasks' outputs are where the submitter sees them when
//   the nodes share that file system. `state_dir` is a hostPath too when outside `workdir`, so
//   `chorus status --state STATE` reads the journal from any machine that sees it.
// - restartPolicy Never (a restarted coordinator would start a new run), no resource requests:
//   Chorus places its task Pods by nodeName against each node's whole allocatable, so a request
//   of the coordinator would make the kubelet refuse a task Pod that placement thought fitted.
// - `api` set (the submitter's API server is on a loopback address): hostNetwork, and
//   KUBERNETES_SERVICE_HOST/PORT set to that address in the container's env, which the kubelet
//   puts before the variables it derives from the `kubernetes` Service (explicit env wins).
//   Otherwise the in-cluster defaults (the Service's ClusterIP) apply.
// - The ConfigMap has the Pod's name and labels; once the Pod exists it gets an ownerReference
//   to it (owner_patch), so deleting the Pod garbage-collects the ConfigMap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace chorus::kube {

// Where the mounted ConfigMap appears in the coordinator's container.
inline constexpr const char* kWorkflowMount = "/etc/chorus/workflow";
// The label on the coordinator Pod and its ConfigMap: the submission's name (= the Pod's name).
inline constexpr const char* kSubmissionLabel = "chorus.submission";

struct ApiAddress {
  std::string host;  // as in the URL, IPv6 without brackets
  std::string port;
};

// The host and port of `server` (https://host[:port]) when host is a loopback address
// (127.0.0.0/8, ::1, localhost); nullopt otherwise or when it cannot be read.
std::optional<ApiAddress> loopback_api_server(const std::string& server);

struct CoordinatorPod {
  std::string name;  // the Pod's and the ConfigMap's name
  std::string namespace_name;
  std::string image;
  std::string image_pull_policy;  // empty: IfNotPresent
  std::string service_account;
  std::string workflow_key;     // the file name inside the ConfigMap
  std::string workflow_text;    // the workflow as submitted
  std::string workflow_source;  // the submitter's absolute path, as an annotation
  std::string workdir;          // absolute
  std::string state_dir;        // absolute
  std::optional<ApiAddress> api;
  std::int64_t deadline_seconds = 0;            // > 0: activeDeadlineSeconds (chorus submit -t)
  std::string grace = "5s";                     // chorus run --grace, the tasks' kill grace
  std::int64_t termination_grace_seconds = 30;  // for the coordinator to delete its task Pods
  // Set: `chorus run --resume RUN` (chorus submit --kubernetes --resume): the run continues from
  // its journal in state_dir, and the Pods of it still running are adopted (pod_launcher.hpp).
  std::string resume_run;
  // Set: the working directory (and the journal in it: state_dir must be inside workdir) is
  // this PersistentVolumeClaim, mounted at workdir here and, through `chorus run
  // --workdir-claim`, in every task Pod; else both are hostPaths of the nodes.
  std::string volume_claim;
};

// "chorus-<workflow name>-<suffix>" made a DNS-1123 label (lowercase, [a-z0-9-], at most 63).
std::string coordinator_pod_name(const std::string& workflow_name, const std::string& suffix);
// A ConfigMap key from a file name: itself when valid ([-._a-zA-Z0-9]+), else "workflow.yaml".
std::string workflow_key(const std::string& file_name);

nlohmann::json coordinator_configmap(const CoordinatorPod& c);
nlohmann::json coordinator_pod_manifest(const CoordinatorPod& c);
// `pod` (as the API lists it) is a coordinator Pod, not yet ended, whose command drives the
// journal in `state_dir` (its `--state` argument): a resume of that folder's run must wait.
bool drives_state(const nlohmann::json& pod, const std::string& state_dir);
// A merge patch giving the ConfigMap an ownerReference to the Pod (name, uid).
nlohmann::json owner_patch(const std::string& pod_name, const std::string& pod_uid);

}  // namespace chorus::kube
