// Reading a workflow file the way every subcommand does: relative paths against the cwd, the
// local machine as the largest node (unless oversubscribing). Exit statuses: cli/exit_status.hpp;
// errors and results are printed through cli/output/output.hpp.
#pragma once

#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/workflow_graph.hpp"

namespace chorus::cli {

// `queue_override` (chorus run --queue) replaces the file's queue policy when the file's
// scheduler options are checked, so options meant for the flag's policy are not refused as the
// file's policy's.
Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, bool oversubscribe,
                                            const std::string& queue_override = {});
// The same, judged against `largest_node` (named `machine_phrase` in messages) instead.
Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, const Resources& largest_node,
                                            const std::string& machine_phrase,
                                            const std::string& queue_override = {});
// The same, judged against the nodes of an allocation (MPI tasks may spread over them).
Result<WorkflowGraph> load_workflow_for_cli(const std::string& path,
                                            const std::vector<NodeInfo>& nodes);

// The same for a container cluster (--backend kubernetes): judged against its nodes, every
// executable task and service must name an image, MPI ranks stay in one Pod.
Result<WorkflowGraph> load_workflow_for_containers(const std::string& path,
                                                   const std::vector<NodeInfo>& nodes,
                                                   const std::string& queue_override = {});

}  // namespace chorus::cli
