// The requests of `chorus submit --kubernetes` (coordinator_pod.hpp holds the manifests): is the
// service account there and allowed what the coordinator will do, then the ConfigMap and the
// Pod. Runs on the submitting command's thread: nothing else runs there.
//
// Contract:
// - check_service_account: 404 is an error that says how to create the account (the RBAC
//   manifest deploy/k8s/rbac.yaml) or name another; 403 on reading it leaves it unchecked.
// - check_service_account_rights: one SubjectAccessReview per right the Kubernetes backend uses
//   (coordinator_rights()); the rights refused are listed in one error. When the submitter may
//   not create SubjectAccessReviews the check is skipped (the coordinator's own 403 explains).
// - check_no_live_coordinator: one LIST of the namespace's coordinator Pods; an error naming
//   the one still driving `state_dir` (drives_state()), if any, and how to stop it. Inside its
//   Pod a coordinator cannot tell an earlier one in another Pod from itself (both are pid 1 in
//   their own pid namespace), so the submitter checks.
// - check_volume_claim: the claim exists (404: an error saying how to make one); 403 on reading
//   it leaves it unchecked. Notes, not errors: a claim not yet Bound (the Pods wait for it), one
//   without ReadWriteMany (Pods on more than one node may not all mount it).
// - create_coordinator: ConfigMap, then Pod, then the ConfigMap's ownerReference to the Pod. A
//   failure deletes what was created (best effort), so a refused submission leaves nothing. A
//   name already taken (the random suffix met an earlier one: 1 in 27^5) is the server's 409.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "adapters/kubernetes/coordinator_pod.hpp"
#include "adapters/kubernetes/kube_client.hpp"
#include "core/status.hpp"

namespace chorus::kube {

struct Right {
  std::string verb, resource, subresource;
  bool cluster_scoped = false;  // nodes
  std::string text() const;     // "create pods", "get pods/log", "list nodes"
};
// What runtime/backends/kubernetes_backend.cpp and pod_launcher.cpp ask of the API server.
std::vector<Right> coordinator_rights();

Status check_service_account(KubeClient& client, const std::string& namespace_name,
                             const std::string& account);
Status check_service_account_rights(KubeClient& client, const std::string& namespace_name,
                                    const std::string& account);

Status check_no_live_coordinator(KubeClient& client, const std::string& namespace_name,
                                 const std::string& state_dir, const std::string& run);

Status check_volume_claim(KubeClient& client, const std::string& namespace_name,
                          const std::string& claim, std::vector<std::string>& notes);

struct CreatedCoordinator {
  std::string name, uid;
};
Result<CreatedCoordinator> create_coordinator(KubeClient& client, const CoordinatorPod& pod);

// How the coordinator Pod started, polled (one GET every 0.5 s) for up to `timeout`: the
// kubelet's verdict on its image and volumes comes within seconds, and a submission whose image
// can never be pulled is better refused at once than left Pending.
struct CoordinatorStart {
  enum class State { running, succeeded, failed, pending } state = State::pending;
  std::string node;     // spec.nodeName once scheduled
  int exit_code = 0;    // failed: the container's exit code (125: the image or config)
  std::string message;  // failed: Kubernetes' reason (pod_outcome); pending: the phase
};
Result<CoordinatorStart> wait_for_start(KubeClient& client, const std::string& namespace_name,
                                        const std::string& name, std::chrono::milliseconds timeout);

}  // namespace chorus::kube
