// Reading a workflow file the way every subcommand does: relative paths against the cwd, the
// local machine as the largest node (unless oversubscribing). Exit statuses: cli/exit_status.hpp;
// errors and results are printed through cli/output/output.hpp.
#pragma once

#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/workflow_graph.hpp"

namespace chorus::cli {

Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, bool oversubscribe);
// The same, judged against `largest_node` (named `machine_phrase` in messages) instead.
Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, const Resources& largest_node,
                                            const std::string& machine_phrase);
// The same, judged against the nodes of an allocation (MPI tasks may spread over them).
Result<WorkflowGraph> load_workflow_for_cli(const std::string& path,
                                            const std::vector<NodeInfo>& nodes);

}  // namespace chorus::cli
