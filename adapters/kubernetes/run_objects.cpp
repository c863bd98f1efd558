#include "adapters/kubernetes/run_objects.hpp"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

namespace chorus::kube {

std::string token_selector(const std::string& token) {
  return "chorus.token%3D" + token;
}

std::string delete_options(Duration grace) {
  const auto seconds =
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(grace).count());
  return R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":)" +
         std::to_string(seconds) + R"(,"propagationPolicy":"Background"})";
}

Result<std::size_t> delete_run_pods(KubeClient& c, const std::string& namespace_name,
                                    const std::string& selector, Duration grace) {
  const std::string path =
      "/api/v1/namespaces/" + namespace_name + "/pods?labelSelector=" + selector;
  auto listed = c.request("GET", path, nullptr, "list pods in namespace " + namespace_name);
  if (!listed) return listed.status();
  std::size_t live = 0;
  for (const auto& pod : (*listed)["items"])
    if (!pod["metadata"].contains("deletionTimestamp")) ++live;
  if (live == 0) return std::size_t{0};
  auto r = c.raw("DELETE", path, delete_options(grace));
  if (!r) return r.status();
  if (r->code < 200 || r->code >= 300)
    return http_error(*r, "delete pods in namespace " + namespace_name, c.config());
  return live;
}

Status delete_run_services(KubeClient& c, const std::string& namespace_name,
                           const std::string& selector) {
  const std::string path =
      "/api/v1/namespaces/" + namespace_name + "/services?labelSelector=" + selector;
  auto r = c.raw("DELETE", path);
  if (!r) return r.status();
  if (r->code >= 200 && r->code < 300) return {};
  if (r->code != 405)
    return http_error(*r, "delete services in namespace " + namespace_name, c.config());
  // Before Kubernetes 1.23 Services have no collection DELETE: list the run's, delete each.
  auto listed = c.request("GET", path, nullptr, "list services in namespace " + namespace_name);
  if (!listed) return listed.status();
  for (const auto& item : (*listed)["items"]) {
    std::string name = item["metadata"].value("name", "");
    auto d = c.raw("DELETE", "/api/v1/namespaces/" + namespace_name + "/services/" + name);
    if (!d) return d.status();
    if (d->code != 404 && (d->code < 200 || d->code >= 300))
      return http_error(*d, "delete services in namespace " + namespace_name, c.config());
  }
  return {};
}

}  // namespace chorus::kube
