// Small graphs and the paper's platform for the planner tests.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/workflow_graph.hpp"
#include "schedulers/planners/platform.hpp"

namespace chorus::test {

// The paper's platform: five types of speed 1.0 .. 2.0, price = speed^2.
inline Platform paper5() {
  Platform p;
  p.name = "paper5";
  for (double s : {1.0, 1.25, 1.5, 1.75, 2.0}) {
    p.types.push_back({"s" + std::to_string(s), s, 4, 4, s * s});
  }
  return p;
}

// Adds a task of `seconds` estimated runtime after `after`; its id.
inline TaskId add(WorkflowGraph& g, const std::string& name, double seconds,
                  std::vector<TaskId> after) {
  TaskSpec t;
  t.name = name;
  t.estimate = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  t.after = std::move(after);
  return g.add(std::move(t));
}

}  // namespace chorus::test
