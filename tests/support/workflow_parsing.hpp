// Helpers shared by the workflow tests: parse inline YAML and look at the result.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "core/workflow_graph.hpp"
#include "workflows/workflow_loader.hpp"

namespace chorus::test {

inline WorkflowLoadOptions test_options() {
  WorkflowLoadOptions o;
  o.base_dir = "/home/u/run";
  o.largest_node = {8, 16384, 1};
  return o;
}

inline Result<WorkflowGraph> parse(std::string_view yaml,
                                   const WorkflowLoadOptions& options = test_options()) {
  return parse_workflow_text(yaml, "wf.yaml", options);
}

// The error message of a workflow that must fail (empty when it unexpectedly parsed).
inline std::string error_of(std::string_view yaml,
                            const WorkflowLoadOptions& options = test_options()) {
  auto r = parse(yaml, options);
  if (r.ok()) return {};
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  return r.status().message();
}

inline bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

inline const TaskSpec* find_task(const WorkflowGraph& g, std::string_view name) {
  for (const auto& t : g.tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace chorus::test
