#include "cli/workflow_input.hpp"

#include <climits>
#include <filesystem>

#include "core/node_info.hpp"
#include "schedulers/policy_registry.hpp"
#include "workflows/workflow_loader.hpp"

namespace chorus::cli {

Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, bool oversubscribe,
                                            const std::string& queue_override) {
  Resources largest = local_node_info().capacity;
  if (oversubscribe) largest.cores = INT_MAX / 4;
  return load_workflow_for_cli(path, largest, "this machine", queue_override);
}

namespace {
Result<WorkflowGraph> load_with(const std::string& path, WorkflowLoadOptions options,
                                const std::string& queue_override = {});
}  // namespace

Result<WorkflowGraph> load_workflow_for_cli(const std::string& path,
                                            const std::vector<NodeInfo>& nodes) {
  WorkflowLoadOptions options;
  for (const auto& n : nodes) {
    options.largest_node.cores = std::max(options.largest_node.cores, n.capacity.cores);
    options.largest_node.memory_mb = std::max(options.largest_node.memory_mb, n.capacity.memory_mb);
    options.largest_node.gpus = std::max(options.largest_node.gpus, n.capacity.gpus);
    options.nodes.push_back(n.capacity);
  }
  options.machine_phrase = "the largest node of this allocation";
  return load_with(path, std::move(options));
}

Result<WorkflowGraph> load_workflow_for_containers(const std::string& path,
                                                   const std::vector<NodeInfo>& nodes,
                                                   const std::string& queue_override) {
  WorkflowLoadOptions options;
  const NodeInfo* largest = nullptr;
  for (const auto& n : nodes) {
    if (largest == nullptr || n.capacity.cores > largest->capacity.cores) largest = &n;
    options.largest_node.cores = std::max(options.largest_node.cores, n.capacity.cores);
    options.largest_node.memory_mb = std::max(options.largest_node.memory_mb, n.capacity.memory_mb);
    options.largest_node.gpus = std::max(options.largest_node.gpus, n.capacity.gpus);
    options.nodes.push_back(n.capacity);
  }
  options.machine_phrase = "the largest node of this cluster" +
                           (largest != nullptr ? " (" + largest->name + ")" : std::string{});
  options.containers = true;
  return load_with(path, std::move(options), queue_override);
}

Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, const Resources& largest_node,
                                            const std::string& machine_phrase,
                                            const std::string& queue_override) {
  WorkflowLoadOptions options;
  options.largest_node = largest_node;
  options.machine_phrase = machine_phrase;
  return load_with(path, std::move(options), queue_override);
}

namespace {
Result<WorkflowGraph> load_with(const std::string& path, WorkflowLoadOptions options,
                                const std::string& queue_override) {
  std::error_code ec;
  options.base_dir = std::filesystem::current_path(ec).string();
  // Policy names and their options are checked by the policies, located in the file, with the
  // file's other problems.
  const auto registry = PolicyRegistry::with_builtins();
  options.check_scheduler = [&registry, &queue_override](const SchedulerChoice& choice) {
    if (queue_override.empty()) return registry.check(choice);
    SchedulerChoice as_run = choice;
    as_run.queue = queue_override;
    as_run.queue_at = {"--queue"};
    return registry.check(as_run);
  };
  options.check_quorum = [&registry](const std::string& policy, const OptionOrigin& at,
                                     const PolicyOptions& quorum_options) {
    return registry.check_quorum(policy, at, quorum_options);
  };
  return load_workflow_file(path, options);
}
}  // namespace

}  // namespace chorus::cli
