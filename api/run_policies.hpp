// The queue and placement policies of one run: chosen by name (RunOptions over the workflow's
// `scheduler:` section over the registry's defaults) and built by the registry with the section's
// options and the run's context. Which options a policy gets is the policy's own business.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "api/run_workflow.hpp"
#include "core/workflow_graph.hpp"
#include "schedulers/policy_registry.hpp"

namespace chorus {

struct RunPolicies {
  std::unique_ptr<QueuePolicy> queue;
  std::unique_ptr<PlacementPolicy> placement;
  // A policy asked for past runtimes (PolicyContext::history) and `history` had none to give:
  // build again with the journal's when it is open.
  bool wants_history = false;
  // Per repeat group of the graph (graph.repeats' order): the policy of its quorum sweep, or null
  // for a group without one. One object per group for the whole run: rounds begin and end on it.
  std::vector<std::unique_ptr<QuorumPolicy>> quorums;
};

// `history`: past runtimes for a policy that asks; empty = none here (the policy then does
// without, and wants_history says it asked). Job weights are the graph's. Errors: the registry's
// (unknown names, options a policy does not take or bad values, located in the workflow file).
Result<RunPolicies> make_run_policies(const WorkflowGraph& graph, const RunOptions& options,
                                      const std::function<RuntimeSamples()>& history = {});

// Only RunPolicies::quorums (a served instance's run: the instance has its queue and placement).
// `registry` null: the built-in one.
Result<std::vector<std::unique_ptr<QuorumPolicy>>> make_quorum_policies(
    const WorkflowGraph& graph, const PolicyRegistry* registry);

}  // namespace chorus
