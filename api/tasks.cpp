#include "api/tasks.hpp"

#include "adapters/inproc/inproc_launcher.hpp"

namespace chorus {

TaskSpec command_task(std::string name, std::vector<std::string> argv, std::vector<TaskId> after) {
  TaskSpec t;
  t.name = std::move(name);
  t.kind = TaskKind::executable;
  t.cmd.argv = std::move(argv);
  t.after = std::move(after);
  return t;
}

TaskSpec shell_task(std::string name, std::string script, std::vector<TaskId> after) {
  TaskSpec t;
  t.name = std::move(name);
  t.kind = TaskKind::executable;
  t.cmd.shell = std::move(script);
  t.after = std::move(after);
  return t;
}

TaskSpec function_task(std::string name, TaskFunction fn, std::vector<TaskId> after) {
  TaskSpec t;
  t.name = std::move(name);
  t.kind = TaskKind::function;
  t.fn = std::move(fn);
  t.per_rank.cores = 0;
  t.after = std::move(after);
  return t;
}

Result<SourceId> add_source(WorkflowGraph& graph, std::string name, std::string host, int port,
                            SourceProbe probe) {
  if (name.empty()) return invalid_argument("a data source needs a name");
  if (host.empty()) return invalid_argument("data source '" + name + "' needs a host");
  if (port < 1 || port > 65535) {
    return invalid_argument("data source '" + name + "': port " + std::to_string(port) +
                            " is not in 1..65535");
  }
  for (const DataSource& s : graph.sources) {
    if (s.name == name) return invalid_argument("data source '" + name + "' is already declared");
  }
  DataSource s;
  s.name = std::move(name);
  s.host = std::move(host);
  s.port = port;
  s.probe = probe;
  graph.sources.push_back(std::move(s));
  return static_cast<SourceId>(graph.sources.size() - 1);
}

TaskSpec with_data(TaskSpec task, DataMovement data) {
  task.data = data;
  return task;
}

ServiceId add_service(WorkflowGraph& graph, ServiceSpec service, const TaskSpec& replica) {
  const auto id = static_cast<ServiceId>(graph.services.size());
  service.replica_tasks.clear();
  for (int r = 0; r < service.replicas; ++r) {
    TaskSpec t = replica;
    t.kind = TaskKind::service;
    t.service = id;
    t.replica = r;
    t.after.clear();
    t.uses.clear();
    t.name =
        service.replicas == 1 ? service.name : service.name + "[replica=" + std::to_string(r) + "]";
    t.kill_grace = service.stop_grace;
    t.env.emplace_back("CHORUS_REPLICA", std::to_string(r));
    if (service.ready.kind == ProbeKind::tcp || service.ready.kind == ProbeKind::http) {
      t.env.emplace_back("CHORUS_SERVICE_PORT", std::to_string(service.ready.port + r));
    }
    service.replica_tasks.push_back(graph.add(std::move(t)));
  }
  graph.services.push_back(std::move(service));
  return id;
}

std::string service_endpoints(const std::string& service) {
  return current_task_env(service_env_name(service)).value_or(std::string{});
}

}  // namespace chorus
