// run_workflow: the one call that runs a WorkflowGraph, journaled — used by `chorus run`,
// `chorus launch` and by applications that embed Chorus. It wires the default pieces: the SQLite
// journal in the state folder, the queue/placement policies chosen by name, and an execution
// backend (runtime/backends/: this machine unless the caller gives agents or an allocation).
#pragma once

#include <string>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/node_info.hpp"
#include "core/workflow_graph.hpp"
#include "runtime/backends/execution_backend.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/run_observer.hpp"
#include "schedulers/policy_registry.hpp"

namespace chorus {

struct RunOptions {
  std::string state_dir;   // default: <cwd>/.chorus
  std::string resume_run;  // a run id (or "latest", a prefix) to continue; empty = a new run
  std::string queue;       // empty: the workflow's `scheduler: {queue: ...}`, else "fifo"
  std::string placement;   // empty: the workflow's choice, else "first-fit"
  // Where `queue` and `placement` were chosen, for messages (`chorus run`: {"--queue"}); empty =
  // in code.
  OptionOrigin queue_at, placement_at;
  const PolicyRegistry* registry = nullptr;  // default: the built-in policies
  bool oversubscribe = false;  // start tasks even when their cores exceed the free cores
  bool fail_fast = false;
  // The local backend made when `backend` is null (runtime/backends/local_backend.hpp): SIGTERM
  // -> SIGKILL on cancel and timeout, the function pool's threads (0 = this machine's cores),
  // and the nodes placement sees (empty = this machine; e.g. one node of N cores).
  Duration kill_grace = std::chrono::seconds(5);
  int function_threads = 0;
  std::vector<NodeInfo> nodes;
  CancelToken* cancel = nullptr;
  RunObserver* observer = nullptr;
  // Dynamic work: called when a task ends (and on resume for tasks skipped as done); it may
  // submit new tasks to the running workflow. See runtime/coordinator.hpp.
  TaskDoneHandler on_task_done;
  // Where tasks run (not owned; started by the caller, stopped after the call if at all): its
  // launchers, its nodes (which placement sees and the journal records) and its placement
  // wrapping. Null: this machine (make_local_backend with the three fields above).
  ExecutionBackend* backend = nullptr;
};

struct RunOutcome {
  RunInfo run;
  RunSummary summary;
  std::string log_dir;
};

// Errors: invalid_argument (a bad graph, an unknown policy, a resumed run of another workflow),
// unavailable (the run to resume is still being driven by a live process), io_error (the state
// folder or journal). A run whose tasks fail is NOT an error: see RunOutcome::summary.status.
Result<RunOutcome> run_workflow(const WorkflowGraph& graph, const RunOptions& options);

// Runtime samples (job class, seconds) from the journal's newest `runs` earlier runs of the
// graph's workflow (same name): what HistoryWork learns from under uwfq/cfq, and the runtimes
// chorus simulate gives a workflow's tasks that declare no estimate. Unreadable runs are skipped.
std::vector<std::pair<std::string, double>> past_runtimes(StateStore& store,
                                                          const WorkflowGraph& graph,
                                                          std::size_t runs = 20);

// The state folder's journal path and a run's log folder (for status/logs commands).
std::string journal_path(const std::string& state_dir);
std::string run_log_dir(const std::string& state_dir, const std::string& run_id);
// <cwd>/.chorus when state_dir is empty; made absolute otherwise.
std::string resolve_state_dir(const std::string& state_dir);

// Whether the coordinator that last drove `run` is alive: same host, same boot, and the pid still
// held by the process with the journaled start time (not one that reused the pid). A run journaled
// before start times were (coordinator_start 0) cannot be verified: never alive.
bool coordinator_alive(const RunInfo& run);

// Sends `signal_number` to the run's coordinator if coordinator_alive() verifies it, race-free
// (through a pidfd). Errors: not_found (the coordinator is gone, or its pid belongs to another
// process now: nothing was signalled), io_error (the kernel refused the signal).
Status signal_coordinator(const RunInfo& run, int signal_number);

}  // namespace chorus
