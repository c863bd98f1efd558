// One member of a TaskTemplate as a TaskSpec: used by the graph builder for the loaded graph and
// by repeat groups for their later rounds.
#pragma once

#include <string>

#include "core/status.hpp"
#include "core/task_spec.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

// `base` joined with `dir` (an absolute `dir` replaces it), normalised, without a trailing '/'.
std::string resolve_dir(const std::string& base, const std::string& dir);

// Fills `spec` (whose name is set) from `t` with `vars` substituted in the command, env,
// workdir (resolved against `workdir`), outputs and inputs; kind, user, resources, timeout,
// retries and estimate are copied. Leaves id, params, after and uses alone. Returns the first
// substitution error; each one is also added to `diags` (at the text's position) when not null.
Status instantiate_task(const TaskTemplate& t, const KeyValues& vars, const std::string& workdir,
                        TaskSpec& spec, DiagnosticList* diags);

}  // namespace chorus
