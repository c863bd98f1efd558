// A workflow service as a Kubernetes Service object: the pure half (no requests), unit-tested
// without a cluster. PodLauncher creates one per service when its first replica is launched and
// deletes the run's at shutdown().
//
// The Service is headless (clusterIP: None): chorus hands its users the replicas' Pod IPs, which
// any Pod reaches, and a headless Service's DNS name resolves to exactly those; a ClusterIP would
// add a virtual address that needs kube-proxy (absent on the test cluster) and hides the
// replicas behind one port. It selects the run's replica Pods (chorus.token + chorus.service);
// its port "service" targets each Pod's containerPort of that name, so the Endpoints list every
// ready replica at its own port (replica r listens on port + r).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/pod_spec.hpp"
#include "core/service_spec.hpp"

namespace chorus::kube {

// The chorus.service label value of a service: its name when that is a valid label value, else
// the name made one, cut, with a digest of the name so two services never share a value.
std::string service_label(const std::string& service);

// "chorus-<run>-<service>": a DNS-1035 label (lowercase, at most 63), the run cut from its front
// as in pod_name(); a service name that had to change gets a digest so names stay apart.
std::string service_object_name(const std::string& run_label, const std::string& service);

// Labelled chorus.run (and chorus.token when `token` is set, what shutdown() selects by);
// selects the replicas by chorus.service and the token (else the run: run ids may repeat across
// state folders, tokens do not). Owned by `owner` when it is set (pod_spec.hpp).
nlohmann::json service_manifest(const ServiceSpec& service, const std::string& run_label,
                                const std::string& token, const std::string& name,
                                const OwnerPod& owner = {});

}  // namespace chorus::kube
