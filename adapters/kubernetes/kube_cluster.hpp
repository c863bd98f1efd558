// What a Kubernetes cluster offers Chorus's placement: its nodes with their allocatable
// resources, readiness and taints, read through the API (one LIST), and what the server serves
// (discovery of the core and batch groups, never a /version string).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_client.hpp"
#include "adapters/kubernetes/kube_config.hpp"
#include "core/node_info.hpp"
#include "core/status.hpp"

namespace chorus::kube {

struct Taint {
  std::string key, value, effect;  // effect: NoSchedule, PreferNoSchedule, NoExecute
};

struct KubeNode {
  NodeInfo info;       // name, allocatable (cores floored, memory in MB, nvidia.com/gpu)
  bool ready = false;  // condition Ready == True
  bool unschedulable = false;
  std::vector<Taint> taints;

  // Chorus tasks carry no tolerations: a node is usable when Ready, schedulable and without a
  // NoSchedule / NoExecute taint.
  bool usable() const;
};

// Kubernetes quantities ("4", "3500m", "8Gi", "123456Ki", "1e3"): cores floored, bytes.
std::optional<double> parse_quantity(const std::string& q);

Result<std::vector<KubeNode>> list_nodes(KubeClient& client);

// Discovery: the core group serves pods (create, delete, watch, log subresource), services and
// endpoints, and batch/v1 jobs; the namespace exists. Errors say what is missing.
Status check_cluster(KubeClient& client, const std::string& namespace_name);

// What every use of a cluster starts with (`chorus run --backend kubernetes`, `chorus submit
// --kubernetes`): the kubeconfig (or the Pod's service account) resolved, check_cluster, and the
// usable nodes read. An error when none is usable, naming the ones that are not.
struct OpenedCluster {
  KubeConfig config;
  std::string namespace_name;   // the one asked for, else the context's
  std::vector<NodeInfo> nodes;  // usable ones only, never empty
  std::uint64_t requests = 0;   // sent while checking (the benchmark's count)
};
Result<OpenedCluster> open_cluster(const std::string& kubeconfig, const std::string& context,
                                   const std::string& namespace_name);

}  // namespace chorus::kube
