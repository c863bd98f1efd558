#include "cli/service_endpoints.hpp"

#include <map>

#include "core/service_spec.hpp"
#include "runtime/services/service_supervisor.hpp"

namespace chorus::cli {
namespace {

std::string service_of(const std::string& replica) {
  return replica.substr(0, replica.find("[replica="));
}

}  // namespace

void print_endpoints(const Output& out, const RunInfo& run, const std::vector<EventRecord>& events,
                     bool env) {
  // By name: replica order within a service. States: starting, ready, restarting, stopped,
  // failed, cancelled.
  std::map<std::string, ServiceReplica> replicas;
  for (const auto& e : events) {
    if (e.kind != TaskKind::service) continue;
    ServiceReplica& r = replicas[e.name];
    r.name = e.name;
    if (e.state == TaskState::running) {
      if (e.detail.rfind(kReadyDetailPrefix, 0) == 0) {
        r.endpoint = e.detail.substr(kReadyDetailPrefix.size());
        r.state = "ready";
      } else {
        r.state = "starting";
      }
    } else if (e.detail.find("(restart ") != std::string::npos) {
      r.state = "restarting";
    } else if (e.state == TaskState::succeeded) {
      r.state = "stopped";
    } else {
      r.state = to_string(e.state);
    }
  }
  const bool live = run.status == RunStatus::running;
  if (env) {
    std::map<std::string, std::string> by_service;
    std::map<std::string, bool> all_ready;
    for (const auto& [name, r] : replicas) {
      const std::string svc = service_of(name);
      auto [it, fresh] = all_ready.emplace(svc, true);
      it->second = it->second && live && r.state == "ready";
      std::string& list = by_service[svc];
      if (!list.empty()) list += ',';
      list += r.endpoint;
    }
    std::vector<std::pair<std::string, std::string>> variables;
    for (const auto& [svc, list] : by_service) {
      if (all_ready[svc]) variables.emplace_back(service_env_name(svc), list);
    }
    out.environment(variables);
    return;
  }
  std::vector<ServiceReplica> shown;
  for (auto& [name, r] : replicas) {
    // A run whose coordinator is gone has no live service, whatever its last event says.
    if (!live && (r.state == "ready" || r.state == "starting" || r.state == "restarting"))
      r.state = "gone (run " + std::string(to_string(run.status)) + ")";
    shown.push_back(std::move(r));
  }
  out.service_endpoints(run.id, shown);
}

}  // namespace chorus::cli
