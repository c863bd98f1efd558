#include "api/run_policies.hpp"

namespace chorus {
namespace {

// Per repeat group (graph.repeats' order): its quorum sweep's policy, or null without one.
Result<std::vector<std::unique_ptr<QuorumPolicy>>> quorum_policies(const WorkflowGraph& graph,
                                                                   const PolicyRegistry& registry,
                                                                   const PolicyContext& context) {
  std::vector<std::unique_ptr<QuorumPolicy>> out;
  for (const RepeatGroup& g : graph.repeats) {
    if (!g.quorum) {
      out.emplace_back();
      continue;
    }
    const QuorumChoice& q = g.quorum->choice;
    auto policy = registry.make_quorum(q.policy, q.options, context, q.policy_at);
    if (!policy.ok()) return policy.status();
    out.push_back(std::move(*policy));
  }
  return out;
}

}  // namespace

Result<RunPolicies> make_run_policies(const WorkflowGraph& graph, const RunOptions& options,
                                      const std::function<RuntimeSamples()>& history) {
  PolicyRegistry builtins;
  const PolicyRegistry* registry = options.registry;
  if (registry == nullptr) {
    builtins = PolicyRegistry::with_builtins();
    registry = &builtins;
  }
  SchedulerChoice choice = graph.scheduler;
  // Names given in code or by a flag override the file's.
  if (!options.queue.empty()) {
    choice.queue = options.queue;
    choice.queue_at = options.queue_at;
  }
  if (!options.placement.empty()) {
    choice.placement = options.placement;
    choice.placement_at = options.placement_at;
  }
  RunPolicies out;
  PolicyContext context;
  context.job_weights = graph.scheduler.job_weights;
  for (const DataSource& s : graph.sources) context.source_names.push_back(s.name);
  context.history = [&]() -> std::optional<RuntimeSamples> {
    if (!history) {
      out.wants_history = true;
      return std::nullopt;
    }
    return history();
  };
  auto made = registry->make_policies(choice, context);
  if (!made.ok()) return made.status();
  out.queue = std::move(made->queue);
  out.placement = std::move(made->placement);
  auto quorums = quorum_policies(graph, *registry, context);
  if (!quorums.ok()) return quorums.status();
  out.quorums = std::move(*quorums);
  return out;
}

Result<std::vector<std::unique_ptr<QuorumPolicy>>> make_quorum_policies(
    const WorkflowGraph& graph, const PolicyRegistry* registry) {
  PolicyRegistry builtins;
  if (registry == nullptr) {
    builtins = PolicyRegistry::with_builtins();
    registry = &builtins;
  }
  PolicyContext context;
  context.job_weights = graph.scheduler.job_weights;
  for (const DataSource& s : graph.sources) context.source_names.push_back(s.name);
  return quorum_policies(graph, *registry, context);
}

}  // namespace chorus
