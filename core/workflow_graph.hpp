// WorkflowGraph: the DAG of TaskSpecs the coordinator runs. Built by workflows/ (from YAML or
// WfFormat) or by the embed API; consumed by runtime/ and the graph planners.
//
// Invariants (established by the builders, checked by validate_graph()): tasks[i].id == i, names
// are unique, every `after` id is < tasks.size(), and the graph has no cycle.
#pragma once

#include <string>
#include <vector>

#include "core/task_spec.hpp"

namespace chorus {

struct WorkflowGraph {
  std::string name;
  std::string source_path;  // the workflow file, or empty when built in code
  std::string workdir;      // absolute; where tasks run unless they say otherwise
  std::vector<TaskSpec> tasks;

  // Appends a task, setting its id; returns the id.
  TaskId add(TaskSpec spec) {
    spec.id = static_cast<TaskId>(tasks.size());
    tasks.push_back(std::move(spec));
    return tasks.back().id;
  }
};

// Checks the invariants above; the message names the offending task (and the cycle, a -> b -> a).
Status validate_graph(const WorkflowGraph& graph);

// For each task, the ids of tasks that list it in `after` (the reverse edges).
std::vector<std::vector<TaskId>> dependents_of(const WorkflowGraph& graph);

}  // namespace chorus
