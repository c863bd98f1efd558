// Reads `defaults:` and the entries of `tasks:` into TaskTemplates, checking every key and value
// type. Errors go to the DiagnosticList; reading goes on so one pass reports all of them.
#pragma once

#include <cstddef>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/task_template.hpp"
#include "workflows/text_budget.hpp"

namespace chorus {

// `entry` is the `defaults:` entry or nullptr; `base` carries the top-level env and workdir.
TaskDefaults read_defaults(const MapEntry* entry, TaskDefaults base, DiagnosticList& diags);

// Reads the task at `index` (0-based) of `tasks:`. nullopt when it is unusable (or its text
// passes `budget`); diagnostics say why.
std::optional<TaskTemplate> read_task(const YAML::Node& node, std::size_t index,
                                      const TaskDefaults& defaults, TextBudget& budget,
                                      DiagnosticList& diags);

// Helpers shared with service_reader and repeat_reader.

// Why `name` cannot name a task (or a service, a repeat group: `what`), or "" when it can.
std::string name_problem(const std::string& name, const std::string& what);

// Reads one of the resource, retry and timeout keys (cores, gpus, memory, retries, timeout) of a
// task or defaults; other keys are ignored. `where` ends messages ("in task 'a'").
void read_common(const MapEntry& e, const std::string& where, Resources& r, Position& cores_pos,
                 Position& memory_pos, Position& gpus_pos, int& retries, Duration& timeout,
                 DiagnosticList& diags);

// Reads `image:` or `image_pull_policy:` (other keys: false, nothing read) into `image` /
// `policy`, reporting an invalid value at it. An image holding placeholders is checked as a
// reference once they are substituted (instantiate_task); one without is checked here.
bool read_image_key(const MapEntry& e, const std::string& where, std::optional<LocatedText>& image,
                    std::optional<LocatedText>& policy, DiagnosticList& diags);

// Fills t.shell / t.argv / t.shell_command from `command:` (nullptr = missing, an error). `shell`
// is the entry's or the inherited value; `shell_explicit` whether the entry itself wrote
// `shell:`. `what` ("task", "service") names the entry in messages. False when it reported.
bool read_command(const MapEntry* e, Position task_pos, bool shell, bool shell_explicit,
                  const std::string& what, TaskTemplate& t, DiagnosticList& diags);

}  // namespace chorus
