// KubeConfig: how to reach one Kubernetes API server and who we are there, read from a
// kubeconfig file (the current or a named context) or from inside a Pod (its service account).
//
// Contract:
// - Everything a request needs is in memory (PEM bytes, the token): nothing is read again per
//   request, and inline `*-data` fields and `certificate-authority: path` end up the same.
// - resolve_kube_config picks, in order: an explicit file, the in-cluster service account when
//   KUBERNETES_SERVICE_HOST is set and no file was named, $KUBECONFIG (first file of the list),
//   ~/.kube/config. Errors name the file and the field, and say what to do.
#pragma once

#include <string>

#include "core/status.hpp"

namespace chorus::kube {

struct KubeConfig {
  std::string server;           // https://host:port, no trailing slash
  std::string ca_pem;           // the cluster CA; empty: the system's trust store
  bool insecure = false;        // insecure-skip-tls-verify: true (said in messages)
  std::string token;            // bearer token, or empty
  std::string client_cert_pem;  // client certificate auth, or empty
  std::string client_key_pem;
  std::string namespace_name = "default";  // the context's namespace
  std::string context;                     // which context ("in-cluster" inside a Pod)
  std::string source;                      // the file it came from, for messages
};

// Reads `path`; `context` empty = the file's current-context.
Result<KubeConfig> load_kube_config(const std::string& path, const std::string& context = {});

// The Pod's own service account: KUBERNETES_SERVICE_HOST/PORT and the files under `sa_dir`
// (token, ca.crt, namespace).
Result<KubeConfig> in_cluster_config(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// `path` empty: in-cluster, $KUBECONFIG or ~/.kube/config (see above).
Result<KubeConfig> resolve_kube_config(const std::string& path, const std::string& context);

}  // namespace chorus::kube
