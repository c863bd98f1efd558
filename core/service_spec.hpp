// ServiceSpec: a persistent process (an inference server, a surrogate model, a database) that runs
// beside the tasks of a workflow and that tasks reach over the network.
//
// Each replica is a TaskSpec of kind `service` in the WorkflowGraph (so the scheduler sees its
// resources in the same queue as every other task); this struct holds what the replicas share: how
// to tell that one is ready, how long to wait for that, and how to restart it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/task_spec.hpp"
#include "core/units.hpp"

namespace chorus {

enum class ProbeKind : std::uint8_t {
  tcp,           // a TCP port accepts connections; endpoint "host:port"
  http,          // GET http://host:port<path> answers 2xx; endpoint "http://host:port"
  stdout_regex,  // a line of the replica's stdout matches `regex`; endpoint = its first capture
                 // group (the whole match when it has none)
  file,          // `path` exists (relative to the task's workdir); endpoint = its first line, or
                 // the path itself when the file is empty
};
const char* to_string(ProbeKind kind);

// The readiness check of a service's replicas. For tcp/http, replica r listens on port + r (and
// gets that port as CHORUS_SERVICE_PORT and the `{port}` placeholder), so replicas can share a
// node.
struct ReadyProbe {
  ProbeKind kind = ProbeKind::tcp;
  int port = 0;       // tcp, http
  std::string path;   // http: the URL path ("/health"); file: the file to wait for
  std::string regex;  // stdout_regex: RE2 syntax (core/line_pattern.hpp), searched in each line
  Duration interval = std::chrono::milliseconds(50);  // between two checks
};

enum class RestartWhen : std::uint8_t { never, on_failure, always };
const char* to_string(RestartWhen when);

// What happens when a replica ends while it is still needed. Restart n (1-based) waits
// backoff * factor^(n-1), capped at max_backoff.
struct RestartPolicy {
  RestartWhen when = RestartWhen::on_failure;
  int max_restarts = 3;
  Duration backoff = std::chrono::seconds(1);
  double factor = 2.0;
  Duration max_backoff = std::chrono::seconds(30);
};

struct ServiceSpec {
  std::string name;  // unique among services; tasks name it in `uses`
  int replicas = 1;
  ReadyProbe ready;
  Duration startup_timeout = std::chrono::seconds(60);  // launch -> ready, per attempt
  RestartPolicy restart;
  Duration stop_grace = std::chrono::seconds(5);  // SIGTERM -> SIGKILL when it is stopped
  std::vector<TaskId> replica_tasks;              // the TaskSpecs of kind service, in replica order
  int line = 0, column = 0;                       // where it is declared (0 = built in code)
};

// The environment variable a task that uses `service` receives its endpoints in:
// CHORUS_SERVICE_<NAME>, the name upper-cased with every character outside [A-Z0-9] as '_'.
std::string service_env_name(const std::string& service);

}  // namespace chorus
