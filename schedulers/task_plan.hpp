// TaskPlan: what a graph planner decided for each task of a run, in the form the live policies
// use (PlanOrderQueue, PlannedPlacement). Built before the run from a Plan by whoever wires the
// run (cli/live_plan); shared read-only by both policies.
//
// Contract: every planned node is one of the run's nodes (the plan is made from them). A task
// planned only on nodes the run does not have would wait for them for ever.
#pragma once

#include <string>
#include <vector>

#include "core/task_spec.hpp"

namespace chorus {

struct PlannedTask {
  bool covered = false;            // false: the plan says nothing (a service, a repeat gate, ...)
  std::size_t position = 0;        // release order over covered tasks, 0 first; a topological order
  std::vector<std::string> nodes;  // where it may run (any of them); never empty when covered
};

struct TaskPlan {
  std::string planner;             // "heft", "spwd": for names and messages
  std::vector<PlannedTask> tasks;  // by TaskId; ids past the end (submitted while running) are
                                   // not covered

  // The plan for `id`, or nullptr when the plan does not cover it.
  const PlannedTask* find(TaskId id) const {
    if (id >= tasks.size() || !tasks[id].covered) return nullptr;
    return &tasks[id];
  }
};

}  // namespace chorus
