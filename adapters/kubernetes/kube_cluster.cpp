#include "adapters/kubernetes/kube_cluster.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace chorus::kube {

bool KubeNode::usable() const {
  if (!ready || unschedulable) return false;
  for (const auto& t : taints)
    if (t.effect == "NoSchedule" || t.effect == "NoExecute") return false;
  return true;
}

std::optional<double> parse_quantity(const std::string& q) {
  if (q.empty()) return std::nullopt;
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(q, &used);
  } catch (...) {
    return std::nullopt;
  }
  std::string suffix = q.substr(used);
  static const std::pair<const char*, double> suffixes[] = {{"", 1},
                                                            {"m", 1e-3},
                                                            {"k", 1e3},
                                                            {"M", 1e6},
                                                            {"G", 1e9},
                                                            {"T", 1e12},
                                                            {"P", 1e15},
                                                            {"E", 1e18},
                                                            {"Ki", 1024.0},
                                                            {"Mi", 1048576.0},
                                                            {"Gi", 1073741824.0},
                                                            {"Ti", 1099511627776.0},
                                                            {"Pi", 1125899906842624.0},
                                                            {"n", 1e-9},
                                                            {"u", 1e-6}};
  for (const auto& [s, factor] : suffixes)
    if (suffix == s) return number * factor;
  return std::nullopt;
}

Result<std::vector<KubeNode>> list_nodes(KubeClient& client) {
  auto j = client.request("GET", "/api/v1/nodes", nullptr, "list nodes");
  if (!j) return j.status();
  std::vector<KubeNode> nodes;
  for (const auto& item : (*j)["items"]) {
    KubeNode n;
    n.info.name = item["metadata"].value("name", "");
    const auto& status = item.value("status", nlohmann::json::object());
    const auto alloc = status.value("allocatable", nlohmann::json::object());
    auto quantity = [&](const char* key) -> double {
      if (!alloc.contains(key) || !alloc[key].is_string()) return 0;
      return parse_quantity(alloc[key].get<std::string>()).value_or(0);
    };
    n.info.capacity.cores = static_cast<int>(std::floor(quantity("cpu") + 1e-9));
    n.info.capacity.memory_mb = static_cast<std::int64_t>(quantity("memory") / 1048576.0);
    n.info.capacity.gpus = static_cast<int>(quantity("nvidia.com/gpu"));
    for (const auto& a : status.value("addresses", nlohmann::json::array()))
      if (a.value("type", "") == "InternalIP") n.info.address = a.value("address", "");
    for (const auto& c : status.value("conditions", nlohmann::json::array()))
      if (c.value("type", "") == "Ready") n.ready = c.value("status", "") == "True";
    const auto spec = item.value("spec", nlohmann::json::object());
    n.unschedulable = spec.value("unschedulable", false);
    for (const auto& t : spec.value("taints", nlohmann::json::array()))
      n.taints.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
    nodes.push_back(std::move(n));
  }
  return nodes;
}

namespace {

// The resource `name` in a discovery document, with every verb in `verbs`.
bool serves(const nlohmann::json& doc, const std::string& name,
            std::initializer_list<const char*> verbs) {
  for (const auto& r : doc.value("resources", nlohmann::json::array())) {
    if (r.value("name", "") != name) continue;
    auto have = r.value("verbs", nlohmann::json::array());
    for (const char* v : verbs) {
      bool found = false;
      for (const auto& h : have) found = found || (h.is_string() && h.get<std::string>() == v);
      if (!found) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

Status check_cluster(KubeClient& client, const std::string& namespace_name) {
  auto core = client.request("GET", "/api/v1", nullptr, "discover the core API group");
  if (!core) return core.status();
  for (const char* r : {"pods", "services", "endpoints", "nodes"})
    if (!serves(*core, r, {"get", "list"}))
      return Status(ErrorCode::unsatisfiable, std::string("the API server at ") +
                                                  client.config().server + " does not serve " + r);
  if (!serves(*core, "pods", {"create", "delete", "watch"}) || !serves(*core, "pods/log", {"get"}))
    return Status(ErrorCode::unsatisfiable,
                  "the API server at " + client.config().server +
                      " does not serve pods with create, delete, watch and their log");
  auto ns = client.raw("GET", "/api/v1/namespaces/" + namespace_name);
  if (!ns) return ns.status();
  if (ns->code == 404)
    return not_found("namespace '" + namespace_name + "' does not exist on " +
                     client.config().server + " (create it, or pass --namespace)");
  // 403 on reading a namespace is fine: many accounts may use a namespace without reading it.
  if (ns->code != 200 && ns->code != 403)
    return http_error(*ns, "read namespace " + namespace_name, client.config());
  return Status::ok_status();
}

Result<OpenedCluster> open_cluster(const std::string& kubeconfig, const std::string& context,
                                   const std::string& namespace_name) {
  auto config = resolve_kube_config(kubeconfig, context);
  if (!config) return config.status();
  OpenedCluster opened;
  opened.namespace_name = namespace_name.empty() ? config->namespace_name : namespace_name;
  KubeClient client(*config);
  Status checked = check_cluster(client, opened.namespace_name);
  auto listed = checked.ok() ? list_nodes(client) : Result<std::vector<KubeNode>>(checked);
  opened.requests = client.requests();
  if (!listed) return listed.status();
  std::string unusable;
  for (auto& n : *listed) {
    if (n.usable())
      opened.nodes.push_back(std::move(n.info));
    else
      unusable += (unusable.empty() ? "" : ", ") + n.info.name;
  }
  if (opened.nodes.empty())
    return Status(
        ErrorCode::unavailable,
        "no node of " + config->server + " can take Pods (not Ready, cordoned or tainted: " +
            (unusable.empty() ? std::string("the cluster has no nodes") : unusable) + ")");
  opened.config = std::move(*config);
  return opened;
}

}  // namespace chorus::kube
