// chorus endpoints RUN: where the services of a run listen (from the journal), one line per
// replica, or --env for the CHORUS_SERVICE_<NAME> lines a task using them receives.
#include <map>

#include "cli/command.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "core/service_spec.hpp"
#include "runtime/services/service_supervisor.hpp"

namespace chorus::cli {
namespace {

std::string service_of(const std::string& replica) {
  return replica.substr(0, replica.find("[replica="));
}

void add_endpoints_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("endpoints", "Print where a run's services listen");
  struct Args {
    std::string run;
    std::string state_dir;
    bool env = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id (or 'latest')")->required();
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--env", a->env,
                "Print CHORUS_SERVICE_<NAME>=endpoints for the services ready now, as tasks get "
                "them");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    auto [store, run] = open_run_or_exit(a->state_dir, a->run);
    const auto events = events_or_exit(*store, run);
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
    const bool live = effective_status(run) == RunStatus::running;
    if (a->env) {
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
        r.state = "gone (run " + std::string(to_string(effective_status(run))) + ")";
      shown.push_back(std::move(r));
    }
    out.service_endpoints(run.id, shown);
  });
}

const CommandRegistrar registrar{"endpoints", add_endpoints_command};

}  // namespace
}  // namespace chorus::cli
