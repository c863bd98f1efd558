// Builders for tasks in C++: the embed API's shorthand for filling TaskSpecs.
//
//   chorus::WorkflowGraph wf;
//   wf.name = "embed";
//   auto gen = wf.add(chorus::command_task("generate", {"sh", "-c", "seq 10 > data.txt"}));
//   wf.add(chorus::function_task("sum", [] { /* ... */ }, {gen}));
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/task_spec.hpp"
#include "core/workflow_graph.hpp"

namespace chorus {

// An executable task (argv, no shell).
TaskSpec command_task(std::string name, std::vector<std::string> argv,
                      std::vector<TaskId> after = {});
// A task run by /bin/sh -c.
TaskSpec shell_task(std::string name, std::string script, std::vector<TaskId> after = {});

// A function task. `fn` returns Status (non-ok fails the task) or void (an exception fails it).
// Function tasks default to 0 cores: they share the in-process pool's threads (one per core) and
// do not hold cores the scheduler hands to processes; set per_rank.cores = 1 to count them.
TaskSpec function_task(std::string name, TaskFunction fn, std::vector<TaskId> after = {});

template <typename F>
requires std::is_void_v<std::invoke_result_t<F&>> TaskSpec
function_task(std::string name, F fn, std::vector<TaskId> after = {}) {
  return function_task(std::move(name), TaskFunction([f = std::move(fn)]() mutable -> Status {
                         f();
                         return {};
                       }),
                       std::move(after));
}

// Declares a service on `graph` with service.replicas replica tasks (kind service) copied from
// `replica` (command, resources, env, workdir, user), named like the service ("name[replica=i]"
// when there are several). Each replica gets CHORUS_REPLICA and, for tcp/http probes,
// CHORUS_SERVICE_PORT (= ready.port + replica) in its environment. Returns the id tasks list in
// TaskSpec::uses.
ServiceId add_service(WorkflowGraph& graph, ServiceSpec service, const TaskSpec& replica);

// Declares a data source tasks read from or write to (workflow files' `sources:`); returns its
// id for DataMovement::from / to. Errors (invalid_argument): an empty name or host, a name
// already declared, a port outside 1..65535.
//
//   auto store = chorus::add_source(wf, "store1", "10.0.0.5", 9000);
//   wf.add(chorus::with_data(chorus::command_task("fetch", {"./fetch"}),
//                            {.input_bytes = 64'000'000, .from = *store, .cpu = 2s}));
Result<SourceId> add_source(WorkflowGraph& graph, std::string name, std::string host, int port,
                            SourceProbe probe = SourceProbe::data_server);

// `task` moving `data` (a task's `data:`): what the network-aware placement estimates from.
TaskSpec with_data(TaskSpec task, DataMovement data);

// Inside a function task that uses services: the endpoints of `service` as a process task would
// get them in CHORUS_SERVICE_<NAME> (comma-separated, replica order); empty elsewhere.
std::string service_endpoints(const std::string& service);

}  // namespace chorus
