// Reads `defaults:` and the entries of `tasks:` into TaskTemplates, checking every key and value
// type. Errors go to the DiagnosticList; reading goes on so one pass reports all of them.
#pragma once

#include <cstddef>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

// `entry` is the `defaults:` entry or nullptr; `base` carries the top-level env and workdir.
TaskDefaults read_defaults(const MapEntry* entry, TaskDefaults base, DiagnosticList& diags);

// Reads the task at `index` (0-based) of `tasks:`. nullopt when it is unusable; diagnostics say
// why.
std::optional<TaskTemplate> read_task(const YAML::Node& node, std::size_t index,
                                      const TaskDefaults& defaults, DiagnosticList& diags);

}  // namespace chorus
