#include "api/run_workflow.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "adapters/local/process_identity.hpp"
#include "api/run_policies.hpp"
#include "core/host_name.hpp"
#include "core/node_info.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/orphans.hpp"
#include "runtime/repeat_driver.hpp"
#include "schedulers/queue/work_estimator.hpp"

namespace chorus {
namespace {

Status make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) return {};
  if (ec == std::errc::read_only_file_system) {
    return io_error("cannot create " + dir +
                    ": the file system is read-only; use a writable state folder (--state DIR)");
  }
  if (ec == std::errc::no_space_on_device) {
    return io_error("cannot create " + dir + ": the disk is full (ENOSPC)");
  }
  return io_error("cannot create " + dir + ": " + ec.message());
}

}  // namespace

std::string resolve_state_dir(const std::string& state_dir) {
  std::error_code ec;
  auto base = std::filesystem::current_path(ec);
  if (state_dir.empty()) return (base / ".chorus").string();
  return std::filesystem::absolute(state_dir, ec).lexically_normal().string();
}

std::vector<std::pair<std::string, double>> past_runtimes(StateStore& store,
                                                          const WorkflowGraph& graph,
                                                          std::size_t runs) {
  std::vector<std::pair<std::string, double>> samples;
  auto listed = store.list_runs();  // oldest first
  if (!listed.ok()) return samples;
  std::size_t seen = 0;
  for (auto r = listed->rbegin(); r != listed->rend() && seen < runs; ++r) {
    if (r->workflow_name != graph.name) continue;
    ++seen;
    auto events = store.events(r->id);
    if (!events.ok()) continue;
    std::vector<JournalEvent> past;
    for (const auto& e : *events) past.push_back({e.name, e.attempt, e.state, e.time});
    for (auto& sample : history_samples(past, graph.tasks)) samples.push_back(std::move(sample));
  }
  return samples;
}

std::string journal_path(const std::string& state_dir) {
  return state_dir + "/chorus.db";
}

std::string run_log_dir(const std::string& state_dir, const std::string& run_id) {
  return state_dir + "/runs/" + run_id + "/logs";
}

bool coordinator_alive(const RunInfo& run) {
  if (run.coordinator_pid <= 0 || run.coordinator_pid > INT_MAX || run.host != host_name()) {
    return false;
  }
  if (!run.boot_id.empty() && run.boot_id != boot_id()) return false;  // it died with that boot
  // Journaled before start times were (schema < 3): nothing verifies that the pid's process is the
  // coordinator, so it is taken as gone and never signalled. (Comparing the process's start with
  // the run's wall-clock update time was tried: a wall clock stepped back, as a new VM's time sync
  // does, made a process that reused the pid look older than the run, and cancel signalled it.)
  if (run.coordinator_start == 0) return false;
  const auto start = process_start_ticks(static_cast<pid_t>(run.coordinator_pid));
  return start && *start == run.coordinator_start;  // no such process, a zombie, or another one
}

Status signal_coordinator(const RunInfo& run, int signal_number) {
  const auto pid = static_cast<pid_t>(run.coordinator_pid);
  // The pidfd pins the process found now: if it is verified below, the signal reaches it or
  // nothing (pidfd_send_signal fails once it has exited), never a process that reuses its pid.
  const int fd = run.coordinator_pid > 0 && run.coordinator_pid <= INT_MAX
                     ? static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U))
                     : -1;
  if (fd < 0 && errno != ENOSYS) {
    return not_found("the coordinator of " + run.id + " (pid " + std::to_string(pid) + ") is gone");
  }
  if (!coordinator_alive(run)) {
    if (fd >= 0) ::close(fd);
    return not_found("the coordinator of " + run.id + " (pid " + std::to_string(pid) +
                     ") is gone; that pid is not it");
  }
  int rc = fd >= 0
               ? static_cast<int>(::syscall(SYS_pidfd_send_signal, fd, signal_number, nullptr, 0U))
               : ::kill(pid, signal_number);
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (rc == 0) return {};
  if (err == ESRCH) return not_found("the coordinator of " + run.id + " exited meanwhile");
  return io_error("cannot signal the coordinator of " + run.id + " (pid " + std::to_string(pid) +
                  "): " + std::strerror(err));
}

Result<RunOutcome> run_workflow(const WorkflowGraph& graph, const RunOptions& options) {
  if (Status s = validate_graph(graph); !s.ok()) return s;
  if (graph.tasks.empty()) return invalid_argument("the workflow has no tasks");

  // Names and options are checked before any file is touched.
  auto policies = make_run_policies(graph, options);
  if (!policies.ok()) return invalid_argument(policies.status().message());

  // Where the tasks run: the caller's backend, else this machine.
  std::unique_ptr<ExecutionBackend> local_backend;
  ExecutionBackend* backend = options.backend;
  if (backend == nullptr) {
    local_backend =
        make_local_backend({options.nodes, options.kill_grace, options.function_threads});
    backend = local_backend.get();
  } else if (!options.nodes.empty()) {
    return invalid_argument("RunOptions::nodes are the local backend's; the " +
                            std::string(backend->name()) + " backend has nodes of its own");
  }
  const LauncherTable launchers = backend->launchers();
  for (Launcher* l : launchers) {
    if (l == nullptr || backend->nodes().empty()) {
      return invalid_argument("the " + std::string(backend->name()) +
                              " backend is not started (call its start() before run_workflow)");
    }
  }
  std::unique_ptr<PlacementPolicy> placed = backend->wrap_placement(std::move(policies->placement));

  const std::string state_dir = resolve_state_dir(options.state_dir);
  if (Status s = make_dirs(state_dir); !s.ok()) return s;
  auto store = open_sqlite_store(journal_path(state_dir));
  if (!store.ok()) return store.status();
  if (policies->wants_history) {
    // R_j from history: runtimes of this workflow's earlier runs in the journal (the newest 20).
    // (The placement is the first build's, already wrapped by the backend.)
    auto with_history =
        make_run_policies(graph, options, [&] { return past_runtimes(**store, graph); });
    if (with_history.ok()) policies->queue = std::move(with_history->queue);
  }
  auto& queue = policies->queue;

  RunInfo run;
  Result<RunState> previous = Status(ErrorCode::not_found, "no previous session");
  if (!options.resume_run.empty()) {
    auto found = (*store)->find_run(options.resume_run);
    if (!found.ok()) return found.status();
    run = *found;
    if (run.workflow_name != graph.name) {
      return invalid_argument("run '" + run.id + "' is of workflow '" + run.workflow_name +
                              "', not '" + graph.name + "'");
    }
    if (coordinator_alive(run) && run.coordinator_pid != getpid()) {
      return Status(ErrorCode::unavailable, "run '" + run.id + "' is still running (pid " +
                                                std::to_string(run.coordinator_pid) +
                                                "); cancel it first with: chorus cancel " + run.id);
    }
    previous = (*store)->replay(run.id);
    if (!previous.ok()) return previous.status();
    // A coordinator killed outright left its tasks running; they are rerun now, not twice at
    // once, unless the backend adopts them (its launcher finds them when they are relaunched).
    auto groups = (*store)->task_groups(run.id);
    if (!groups.ok()) return groups.status();
    if (!backend->adopts_running_work()) kill_orphans_of_run(run, *groups, *previous);
    if (Status s = (*store)->forget_task_groups(run.id); !s.ok()) return s;
    if (run.token.empty()) run.token = new_run_token();  // a run from before tokens existed
  } else {
    // A new run goes into a sound journal only (a damaged one would lose it, or mislead resumes).
    if (Status s = (*store)->check_integrity(); !s.ok()) return s;
    run.workflow_name = graph.name;
    run.workflow_path = graph.source_path;
    run.created = wall_seconds_now();
  }
  run.workdir = graph.workdir;
  run.status = RunStatus::running;
  run.updated = wall_seconds_now();
  run.total_tasks = static_cast<std::int64_t>(graph.tasks.size());
  run.coordinator_pid = getpid();
  run.coordinator_start = process_start_ticks(getpid()).value_or(0);
  run.boot_id = boot_id();
  run.host = host_name();
  std::vector<NodeInfo> nodes = backend->nodes();
  if (options.oversubscribe) {
    for (auto& n : nodes) n.capacity.cores = INT_MAX / 4;
  }
  run.nodes = nodes;
  if (options.resume_run.empty()) {
    auto created = (*store)->create_run(run);
    if (!created.ok()) return created.status();
    run = *created;
  } else if (Status s = (*store)->update_run(run); !s.ok()) {
    return s;
  }

  RunOutcome outcome;
  outcome.log_dir = run_log_dir(state_dir, run.id);
  if (Status s = make_dirs(outcome.log_dir); !s.ok()) return s;

  if (options.observer != nullptr) options.observer->on_run_started(run.id);
  CoordinatorOptions copts;
  copts.log_dir = outcome.log_dir;
  copts.fail_fast = options.fail_fast;
  copts.on_task_done = options.on_task_done;
  copts.run_token = run.token;
  copts.lost_requeues = backend->lost_requeues();
  // What the backend adopts holds its node: the resumed attempt goes back there.
  copts.resume_in_place = backend->adopts_running_work();
  if (NodeFactsSource* facts = backend->facts_source(); facts != nullptr) {
    facts->set_probe_targets(graph.sources);
    copts.facts = facts;
  }
  RepeatDriver repeats(graph, std::move(policies->quorums));
  if (!graph.repeats.empty()) {
    copts.on_task_done = [&repeats, user = options.on_task_done](
                             const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter) {
      repeats.on_task_done(task, outcome, submitter);
      if (user) user(task, outcome, submitter);
    };
  }
  if (repeats.has_quorums()) {
    copts.on_turn = [&repeats](TimePoint now, TaskSubmitter& submitter) {
      return repeats.on_turn(now, submitter);
    };
  }
  Coordinator coordinator(graph, **store, run.id, nodes, *queue, *placed, launchers, copts,
                          options.cancel, options.observer);
  auto summary = coordinator.run(previous.ok() ? &*previous : nullptr);

  run.status = summary.ok() ? summary->status : RunStatus::interrupted;
  // Tasks submitted while it ran (repeat rounds, completion handlers) count too.
  if (summary.ok()) run.total_tasks = summary->progress.total;
  run.updated = wall_seconds_now();
  run.coordinator_pid = 0;
  run.coordinator_start = 0;
  Status updated = (*store)->update_run(run);
  if (!summary.ok()) return summary.status();
  if (!updated.ok()) return updated;
  // Every task has ended (the launchers reaped them), so their groups are gone.
  (void)(*store)->forget_task_groups(run.id);
  // The run lives in the write-ahead log until a checkpoint: fold it into chorus.db now, so the
  // file alone holds it (a lost or deleted chorus.db-wal must not lose a finished run). Best
  // effort: a reader may hold part of the log back, and the log is durable as it is.
  (void)(*store)->checkpoint();
  outcome.run = run;
  outcome.summary = std::move(*summary);
  return outcome;
}

}  // namespace chorus
