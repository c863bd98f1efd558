// The Kubernetes backend (issue 16): every executable task and service replica a Pod on the
// node placement chose (adapters/kubernetes/pod_launcher.hpp), functions on the in-process pool.
// The nodes, their allocatable resources and taints come from the API at start(), so the queue
// and placement policies work unchanged.
//
// Contract (beyond ExecutionBackend's):
// - start() resolves the kubeconfig (or the Pod's service account), checks the API serves what
//   the launcher needs and the namespace exists, and lists the nodes; usable ones only (Ready,
//   schedulable, no NoSchedule/NoExecute taint). Idempotent: a started backend returns ok.
// - stop() deletes the run's Pods (one collection DELETE) and waits up to ten seconds.
// - An API server that does not answer for `api_give_up` fails every task in flight with its
//   address in the message (their Pods' fate is unknown); the journal keeps what finished,
//   `--resume` continues once the server is back.
#pragma once

#include <memory>
#include <string>

#include "core/units.hpp"
#include "runtime/backends/execution_backend.hpp"

namespace chorus {

struct KubernetesBackendOptions {
  std::string kubeconfig;      // empty: in-cluster, $KUBECONFIG, ~/.kube/config
  std::string context;         // empty: the file's current context
  std::string namespace_name;  // empty: the context's (default "default")
  Duration kill_grace = std::chrono::seconds(5);
  std::chrono::seconds api_give_up{60};
  int function_threads = 0;
  // The Pod this coordinator runs in (name and uid; `chorus submit --kubernetes` passes them to
  // it through the downward API): it owns the run's Pods and Services, so Kubernetes deletes
  // them when it is deleted, even force-deleted. Empty: the coordinator runs outside the cluster.
  std::string owner_pod, owner_pod_uid;
  // A PersistentVolumeClaim holding the working directory, mounted at `workdir_claim_path` (the
  // coordinator's cwd, where its Pod has the claim mounted) in every task Pod whose working
  // directory is below it. Empty: task Pods mount their working directory as a hostPath.
  std::string workdir_claim, workdir_claim_path;
};

std::unique_ptr<ExecutionBackend> make_kubernetes_backend(KubernetesBackendOptions options);

// `chorus cancel` of a run whose coordinator is gone: the run's Pods (label chorus.token=`token`)
// deleted with `options.kill_grace`, then its Services, in `options`' cluster and namespace.
// Returns how many Pods were still running or pending.
Result<std::size_t> delete_kubernetes_run(const KubernetesBackendOptions& options,
                                          const std::string& token);

}  // namespace chorus
