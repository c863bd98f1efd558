// Writes a WorkflowGraph imported from WfCommons as a Chorus workflow YAML (what
// `chorus import wfcommons FILE.json -o wf.yaml` produces).
//
// Each task becomes `{name, command: [sleep, "<runtime>"], estimate: <runtime>s, cores, memory,
// after}`: running it replays the trace's shape with real sleeps (a run-time replay scale belongs
// to the runtime, not to the file).
#pragma once

#include <string>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"

namespace chorus {

// The YAML text. Never fails for a graph that passed validate_graph().
std::string wfcommons_to_yaml(const WorkflowGraph& graph);

// Writes wfcommons_to_yaml(graph) to `path` (io_error with the OS reason when it cannot).
Status write_wfcommons_yaml(const WorkflowGraph& graph, const std::string& path);

}  // namespace chorus
