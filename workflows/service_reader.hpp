// Reads the top-level `services:` list into ServiceTemplates: the replicas' command, resources,
// env and workdir as a TaskTemplate (expanded per replica by the graph builder, with the
// placeholders {replica} and {port}), and the ServiceSpec fields (probe, restart, timeouts).
#pragma once

#include <optional>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/service_spec.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/task_template.hpp"
#include "workflows/text_budget.hpp"

namespace chorus {

struct ServiceTemplate {
  TaskTemplate task;   // kind service; no sweep, after, retries, timeout or uses
  ServiceSpec spec;    // everything but replica_tasks
  Position ready_pos;  // the `ready:` value (port range errors point here)
  Position port_pos;   // the port number, when tcp/http
};

// The placeholders a service's command, env and workdir may use for replica `replica`: {replica},
// and {port} (ready port + replica) when the probe is tcp or http.
KeyValues service_placeholders(const ServiceSpec& spec, int replica);

// `entry` is the `services:` entry. Services inherit resources, env, workdir and shell from
// `defaults:` and the top level (not retries, timeout or uses). Returns the readable services;
// every problem is reported.
std::vector<ServiceTemplate> read_services(const MapEntry& entry, const TaskDefaults& defaults,
                                           TextBudget& budget, DiagnosticList& diags);

}  // namespace chorus
