// Pointing at task entries of a workflow file: located errors for the entries whose tasks lack
// something (an estimate, for a planner or for the simulator). Positions come from the graph
// (TaskSpec::pos, set by the workflow reader); the file is not read again.
#pragma once

#include <functional>
#include <string>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"

namespace chorus::cli {

// The file as the user would name it: relative to the cwd when it lies below it.
std::string display_path(const std::string& path);

// ok when no task of `graph` is `lacking`; otherwise invalid_argument with one located diagnostic
// per task entry (a sweep is one entry), at most 20, in file order:
//   "wf.yaml:4:5: <need>, and 'a' has none: <fix>"   ("'a' (8 members) have none" for sweeps)
// `path` is the file as the user named it (empty: a graph built in code, names unlocated).
Status locate_missing_estimates(const WorkflowGraph& graph, const std::string& path,
                                const std::function<bool(const TaskSpec&)>& lacking,
                                const std::string& need, const std::string& fix);

}  // namespace chorus::cli
