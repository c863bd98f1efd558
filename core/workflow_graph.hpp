// WorkflowGraph: the DAG of TaskSpecs the coordinator runs. Built by workflows/ (from YAML or
// WfFormat) or by the embed API; consumed by runtime/ and the graph planners.
//
// Invariants (established by the builders, checked by validate_graph()): tasks[i].id == i, names
// are unique, every `after` id is < tasks.size(), and the graph has no cycle.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/task_spec.hpp"

namespace chorus {

// The `scheduler:` section of a workflow file: policies by name (checked against the policy
// registry by whoever runs the graph) and users' share weights. Lines and columns are 1-based and
// point at each name in the file (0 = not from a file), so a bad name gets a located error.
struct SchedulerChoice {
  std::string queue;                      // empty = the runner's default
  std::string placement;                  // empty = the runner's default
  std::map<std::string, double> weights;  // user -> weight, for fair-share queue policies
  int queue_line = 0, queue_column = 0;
  int placement_line = 0, placement_column = 0;
  int weights_line = 0, weights_column = 0;
};

struct WorkflowGraph {
  std::string name;
  std::string source_path;  // the workflow file, or empty when built in code
  std::string workdir;      // absolute; where tasks run unless they say otherwise
  std::vector<TaskSpec> tasks;
  SchedulerChoice scheduler;

  // Appends a task, setting its id; returns the id.
  TaskId add(TaskSpec spec) {
    spec.id = static_cast<TaskId>(tasks.size());
    tasks.push_back(std::move(spec));
    return tasks.back().id;
  }
};

// Checks the invariants above; the message names the offending task (and the cycle, a -> b -> a).
Status validate_graph(const WorkflowGraph& graph);

// A dependency cycle in "waits for" order (a waits for b waits for ... waits for a), starting at
// its lowest task id, or empty when the graph has none. Ids in `after` must be < tasks.size().
std::vector<TaskId> find_cycle(const WorkflowGraph& graph);

// "a -> b -> a" for a cycle from find_cycle().
std::string describe_cycle(const WorkflowGraph& graph, const std::vector<TaskId>& cycle);

// For each task, the ids of tasks that list it in `after` (the reverse edges).
std::vector<std::vector<TaskId>> dependents_of(const WorkflowGraph& graph);

}  // namespace chorus
