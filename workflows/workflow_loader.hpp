// Reading a workflow file (YAML, format version 1) into a WorkflowGraph: the entry point of
// workflows/. The format is described in workflows/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resources.hpp"
#include "core/status.hpp"
#include "core/workflow_graph.hpp"

namespace chorus {

// Files above this size are refused before they are read (a workflow of a million tasks is a
// few hundred KB thanks to sweeps).
inline constexpr std::uint64_t kMaxWorkflowFileBytes = 16 * 1024 * 1024;
// The YAML document with its aliases (*name) expanded, as the readers see it: each scalar's bytes
// plus 8 per node. A file within kMaxWorkflowFileBytes without aliases stays far below it.
inline constexpr std::uint64_t kMaxWorkflowDocumentBytes = 128 * 1024 * 1024;
// The text of all tasks (commands, env, workdirs, outputs, inputs, names), counted as it is
// read (inherited values once per task) and again for sweep expansion (each member its own
// copy, placeholders substituted): a 10 KB env value copied into a million members is refused
// here, before it is allocated.
inline constexpr std::uint64_t kMaxWorkflowTextBytes = 512 * 1024 * 1024;
// Tasks after sweep expansion.
inline constexpr std::uint64_t kMaxWorkflowTasks = 1'000'000;
// Nesting of flow collections ([...] / {...}); deeper input is refused before parsing.
inline constexpr int kMaxWorkflowNesting = 64;

struct WorkflowLoadOptions {
  std::string base_dir;    // absolute; relative `workdir:` values resolve against it (the cwd of
                           // `chorus run`). Empty = the process's current directory.
  Resources largest_node;  // tasks needing more than this "can never run here"; cores == 0 =
                           // unknown (nothing is checked), memory_mb == 0 = memory unchecked
  std::string machine_phrase = "this machine";  // used in that message
  // Every node's capacity when the nodes are known (an allocation): MPI tasks may spread over
  // them, so they "can never run in this allocation" only when all of them together lack room.
  std::vector<Resources> nodes;
  // The run's tasks go to containers (`chorus run --backend kubernetes`): every executable task
  // and service needs an `image:` (its own or from defaults), and an MPI task must keep its
  // ranks on one node (a Pod), since chorus has no MPI Operator support yet; a service's probe
  // must be one Kubernetes can run as a readinessProbe (tcp, http, file; not stdout). Function
  // tasks run in the coordinator and are exempt.
  bool containers = false;
  // The text the tasks may hold, as read and after expansion (kMaxWorkflowTextBytes).
  std::uint64_t max_text_bytes = kMaxWorkflowTextBytes;
  // Tasks after expansion (a fuzz target lowers it to stay fast).
  std::uint64_t max_tasks = kMaxWorkflowTasks;
  // Checks the `scheduler:` section (policy names and their options) against the policies that
  // will run it, which workflows/ does not know: the runner does (PolicyRegistry::check). Its
  // problems are reported with the file's others. Empty: the section's names and options are not
  // checked here (the runner refuses them when it builds the policies). Not called when the
  // section names a planner.
  std::function<std::vector<OptionIssue>(const SchedulerChoice&)> check_scheduler;
  // Checks a `quorum:`'s policy name and options (PolicyRegistry::check_quorum), likewise. Empty:
  // not checked here (the runner refuses them when it builds the policies).
  std::function<std::vector<OptionIssue>(const std::string& policy, const OptionOrigin& at,
                                         const PolicyOptions& options)>
      check_quorum;
};

// Reads, validates and expands a workflow file. On error the Status (invalid_argument) message
// holds one diagnostic per line, "path:line:col: message", at most 20, in file order, from the
// first phase of checking that failed (syntax, then keys and values, then references, then
// cycles). A path that does not exist gives not_found; other OS errors io_error.
// The graph satisfies validate_graph(); source_path is the file's absolute path.
Result<WorkflowGraph> load_workflow_file(const std::string& path,
                                         const WorkflowLoadOptions& options);

// The same for text already in memory; `path_for_messages` prefixes diagnostics, gives the
// default workflow name (its stem) and becomes source_path as written.
Result<WorkflowGraph> parse_workflow_text(std::string_view text,
                                          const std::string& path_for_messages,
                                          const WorkflowLoadOptions& options);

}  // namespace chorus
