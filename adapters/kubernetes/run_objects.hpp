// What one run made in a namespace, found by its token label (`chorus.token=<token>`, which no
// other run has), and deleted: by PodLauncher::shutdown at a run's end, and by `chorus cancel`
// of a run whose coordinator is gone (its Pods would otherwise run on).
#pragma once

#include <cstddef>
#include <string>

#include "adapters/kubernetes/kube_client.hpp"
#include "core/status.hpp"
#include "core/units.hpp"

namespace chorus::kube {

// The URL-encoded label selector of a run's objects.
std::string token_selector(const std::string& token);

// A DeleteOptions body: `grace` (whole seconds, at least 0) to stop, dependents in background.
std::string delete_options(Duration grace);

// The run's Pods deleted by one collection DELETE, each with `grace` to stop (SIGTERM, then
// SIGKILL); returns how many were not already terminating (one LIST before).
Result<std::size_t> delete_run_pods(KubeClient& c, const std::string& namespace_name,
                                    const std::string& selector, Duration grace);

// The run's Services deleted: one collection DELETE, or where the server has none for Services
// (before Kubernetes 1.23: 405) a LIST and one DELETE each.
Status delete_run_services(KubeClient& c, const std::string& namespace_name,
                           const std::string& selector);

}  // namespace chorus::kube
