// Coordinator: runs one WorkflowGraph to completion on one event loop.
//
// Each loop round: fold launcher updates into task states, move tasks whose dependencies are done
// to the queue policy, place what fits (queue policy picks, the placement step chooses the node or
// the rank shares), journal every transition of the round in ONE StateStore::append, and only then
// launch. So a coordinator killed at any instant resumes from the journal without repeating
// finished work, and journaling costs one transaction per round, not one per task.
//
// Its parts: runtime/task_table.hpp (task states under the state machine, dependencies, the cancel
// cascade, counters), schedulers/placement/ (PlacementStep, ClusterState), runtime/services/
// service_lifecycle.hpp (park, wake, restart, stop), and the loop in coordinator.cpp.
//
// Threading: run() blocks the calling thread; every other method of the policies, launchers and
// store is called from it. Cancellation comes in through a CancelToken.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/node_info.hpp"
#include "core/workflow_graph.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/loop_clock.hpp"
#include "runtime/node_facts_source.hpp"
#include "runtime/run_observer.hpp"
#include "runtime/store/state_store.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

// Which launcher runs each TaskKind (indexed by the enum's value); nullptr = kind not supported.
using LauncherTable = std::array<Launcher*, kTaskKindCount>;

// Lets a completion handler add work to the running workflow (see CoordinatorOptions).
class TaskSubmitter {
 public:
  virtual ~TaskSubmitter() = default;
  // Adds a task; `after` may name any task of the run (earlier or added). Its id is returned.
  // Errors: invalid_argument for an empty or duplicate name, an unknown dependency, or a kind
  // this run cannot launch.
  virtual Result<TaskId> submit(TaskSpec spec) = 0;
  // Adds a service (`replica_tasks` is ignored): its replicas are then submitted, in replica
  // order, as tasks of kind service with `service` the id returned and `replica` their index; tasks
  // that name it in `uses` wait for it to be up and get its endpoints. It runs until
  // stop_service() (or it fails for good); it is never stopped as unneeded. Errors:
  // invalid_argument for a service without replicas.
  virtual Result<ServiceId> submit_service(ServiceSpec service) = 0;
  // Stops a service added by submit_service: its replicas are stopped (ending succeeded), those
  // not started are cancelled. Idempotent. Errors: invalid_argument for another id.
  virtual Status stop_service(ServiceId service) = 0;
  // Lets a task marked `held` start once its dependencies are done. Idempotent. Errors:
  // invalid_argument for an unknown id or a task that is not held.
  virtual Status release(TaskId task) = 0;
  // Makes `task`, which has not started, also wait for `on` (a finished `on` that did not succeed
  // cancels it). Errors: invalid_argument for unknown ids or once `task` left the pending state.
  virtual Status add_dependency(TaskId task, TaskId on) = 0;
  // Fails a task that has not started, with `why` as its message (and cancels what depends on it).
  // A task already running or finished is left alone.
  virtual Status fail_unstarted(TaskId task, const std::string& why) = 0;
  // Ends a task that a quorum round closed without (runtime/repeat_driver.hpp): it moves to
  // cancelled, journaled with core/task_state.hpp's kDroppedDetailPrefix + `why`; a running one's
  // process is stopped like a cancel once that event is journaled (its late exit is ignored).
  // It is not a failure, and what waits for it counts it as done (as if it had succeeded). A
  // task already finished is left alone. Errors: invalid_argument for an unknown id.
  virtual Status drop(TaskId task, const std::string& why) = 0;
  // Cancels a task of the run (a served instance's `chorus cancel`): one that has not started
  // ends cancelled with `why` and so does what depends on it; a running one is stopped (its
  // launcher's cancel) and ends cancelled when the launcher reports it. A task already finished
  // is left alone. Errors: invalid_argument for an unknown id.
  virtual Status cancel(TaskId task, const std::string& why) = 0;
  // Whether `task` was dropped, in this session or (on resume) an earlier one.
  virtual bool dropped(TaskId task) const = 0;
  // The loop's clock (CoordinatorOptions::clock, or the real one).
  virtual TimePoint now() = 0;
  // A task's name ("" for an unknown or forgotten id).
  virtual std::string_view task_name(TaskId task) const = 0;
  // Gives back the memory of a submitted task that ended and will not be asked about again (a
  // served instance's finished run): its spec is released after the next journal write, its
  // name may be used again, and any later call with its id is refused (invalid_argument). Ids
  // never move: its task-table entry is released in place (the memory goes with its block's
  // last). Errors: invalid_argument for a task of the graph, one not ended, one whose
  // dependencies have not all ended, a service replica (its service keeps it), or an unknown id.
  virtual Status forget(TaskId task) = 0;
};

// Called on the coordinator's thread once a task's final state is journaled; may submit tasks.
// On resume it is also called, in task order, for every task skipped as already succeeded, so a
// workflow that grows from its results grows the same way again.
using TaskDoneHandler =
    std::function<void(const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter)>;

// Called on the coordinator's thread once per loop turn, before tasks are placed, with the
// loop's time; may drop, submit or release tasks. Returns the latest time it wants to be called
// again (the loop's wait ends by then), or nullopt for no such time. Must be cheap: it runs on
// every turn.
using TurnHandler = std::function<std::optional<TimePoint>(TimePoint now, TaskSubmitter&)>;

// Where a task of a served instance belongs (CoordinatorOptions::home_of). The views must stay
// valid while the task runs.
struct TaskHome {
  std::string_view run_id;        // its CHORUS_RUN_ID
  std::string_view log_dir;       // absolute; its <name>.<attempt>.{out,err} go there
  std::string_view name;          // its name in its run (CHORUS_TASK, the log files)
  const RunAs* run_as = nullptr;  // the user it runs as; null = the coordinator's
};

struct CoordinatorOptions {
  std::string log_dir;  // absolute; task stdout/stderr go to <log_dir>/<task>.<attempt>.{out,err}
  bool fail_fast = false;  // after the first task fails for good, start nothing new
  Duration tick_interval = std::chrono::milliseconds(250);  // RunObserver::on_progress cadence
  // Most tasks of one launcher handed over at once (its queue depth); bounds how many tasks a
  // launcher that queues internally (the function pool) holds as "running".
  std::size_t max_in_flight_per_launcher = 4096;
  TaskDoneHandler on_task_done;  // optional: dynamic work
  TurnHandler on_turn;           // optional: deadlines of quorum rounds
  // Given to every task as CHORUS_RUN_TOKEN (RunInfo::token): how a resume recognises the run's
  // processes. Empty: not set.
  std::string run_token;
  // Where the loop reads the time and waits (must outlive run()); nullptr = the real clock and
  // poll(2). Tests inject a manual one.
  LoopClock* clock = nullptr;
  // Where the nodes' telemetry comes from (the agents backend's); nullptr = none. Asked once per
  // loop turn before tasks are placed; must outlive run().
  NodeFactsSource* facts = nullptr;
  // A served instance (api/served_instance.hpp): work keeps arriving through on_turn, so the loop
  // waits on when every task is done, and ends only when cancelled.
  bool open_ended = false;
  // Readable when work arrives from outside the loop (for on_turn to take); -1 = none. Polled
  // with the launchers' fds; on_turn empties it.
  int wake_fd = -1;
  // A served instance's tasks belong to several runs: where each one does. Unset: every task is
  // this run's (run_id, log_dir, the coordinator's user).
  std::function<TaskHome(const TaskSpec&)> home_of;
  // An attempt its launcher lost (UpdateKind::lost: the agent's node went away, a pilot job
  // ended) is queued again without using one of the task's retries, up to this many times per
  // task; then losses count as failed attempts. 0: every loss is a failed attempt. A served
  // instance on pilot jobs sets it: a pilot ending is the site's doing, not the task's.
  std::uint32_t lost_requeues = 0;
  // On resume: a task whose attempt was running when the earlier session ended is placed first,
  // on the node that attempt ran on, without asking the placement policy (while that node has
  // room for it; else it is placed as any other). For a site that adopts what still runs
  // (ExecutionBackend::adopts_running_work: Kubernetes' Pods), whose resources are really in use
  // there: placed elsewhere, the node would be booked as free while the adopted work holds it.
  bool resume_in_place = false;
};

struct FailedTask {
  std::string name;
  TaskState state = TaskState::failed;
  std::string message;
  std::string stderr_path;  // empty for function tasks
};

struct RunSummary {
  RunStatus status = RunStatus::succeeded;
  Progress progress;
  std::vector<FailedTask> failures;  // failed or timed out for good, in the order they ended
};

class Coordinator {
 public:
  // All references must outlive run(). `nodes` is the cluster the placement policy sees.
  Coordinator(const WorkflowGraph& graph, StateStore& store, std::string run_id,
              std::vector<NodeInfo> nodes, QueuePolicy& queue, PlacementPolicy& placement,
              LauncherTable launchers, CoordinatorOptions options, CancelToken* cancel = nullptr,
              RunObserver* observer = nullptr);
  ~Coordinator();

  // Runs until every task is terminal, or cancellation finished. `previous` (may be null) is the
  // replayed journal of an earlier session of the same run: tasks that succeeded there with the
  // same spec fingerprint are not run again. Errors: io_error when the journal cannot be written
  // (the run stops: nothing is launched that was not journaled), invalid_argument when a task's
  // kind has no launcher.
  Result<RunSummary> run(const RunState* previous);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus
