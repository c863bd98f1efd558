// Pointing at task entries of a workflow file: where each entry's name is, and located errors
// for the entries whose tasks lack something (an estimate, for a planner or for the simulator).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"

namespace chorus::cli {

struct Where {
  int line = 0, column = 0;  // 1-based; 0 = not located
};

// Task entries of `tasks:` (and of repeat groups' `tasks:`) by name: the position of the name.
// Reads the file again; an unreadable file gives an empty map.
std::map<std::string, Where> task_positions(const std::string& path);

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
