// run_workflow: the one call that runs a WorkflowGraph on this machine, journaled — used by
// `chorus run` and by applications that embed Chorus. It wires the default pieces: the SQLite
// journal in the state folder, the local process launcher, the in-process function pool, and the
// queue/placement policies chosen by name.
#pragma once

#include <string>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/node_info.hpp"
#include "core/workflow_graph.hpp"
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
  int function_threads = 0;    // threads for function tasks; 0 = this machine's cores
  bool fail_fast = false;
  Duration kill_grace = std::chrono::seconds(5);  // SIGTERM -> SIGKILL on cancel and timeout
  CancelToken* cancel = nullptr;
  RunObserver* observer = nullptr;
  // Dynamic work: called when a task ends (and on resume for tasks skipped as done); it may
  // submit new tasks to the running workflow. See runtime/coordinator.hpp.
  TaskDoneHandler on_task_done;
  // Where tasks may run: empty = this machine alone; else these nodes (a Slurm allocation's),
  // which placement sees and the journal records. Launchers must then run tasks on
  // LaunchRequest::node.
  std::vector<NodeInfo> nodes;
  // Launchers for executable and MPI tasks (not owned; they must outlive the call); null = the
  // local defaults (a LocalLauncher, an MpiLauncher over mpirun).
  Launcher* executable_launcher = nullptr;
  Launcher* mpi_launcher = nullptr;
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
// held by the process with the journaled start time (not one that reused the pid). Runs journaled
// before start times were: the pid's process started before the run was last updated.
bool coordinator_alive(const RunInfo& run);

// Sends `signal_number` to the run's coordinator if coordinator_alive() verifies it, race-free
// (through a pidfd). Errors: not_found (the coordinator is gone, or its pid belongs to another
// process now: nothing was signalled), io_error (the kernel refused the signal).
Status signal_coordinator(const RunInfo& run, int signal_number);

}  // namespace chorus
