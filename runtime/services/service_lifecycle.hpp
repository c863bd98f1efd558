// ServiceLifecycle: what the coordinator decides about its services — which tasks wait (parked)
// for a service to be up and are woken when it is, restarting a replica after its back-off,
// failing a service for good (and its waiting users), stopping services nothing needs any more,
// and whether only ready services hold the nodes (so a task waiting for room would wait forever).
//
// It owns the ServiceSupervisor (probes, endpoints). It journals and launches nothing itself:
// through Host it asks the coordinator to journal an event, end or cancel a task, queue one or
// stop an attempt, so every change is journaled before it is acted on. Replica state moves go
// through the TaskTable. Coordinator thread only.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/service_spec.hpp"
#include "core/task_spec.hpp"
#include "runtime/services/service_supervisor.hpp"
#include "runtime/task_table.hpp"

namespace chorus {

class ServiceLifecycle {
 public:
  // What the lifecycle asks of the coordinator (called once per service event, never per task).
  class Host {
   public:
    virtual ~Host() = default;
    // Dependencies (or a service) no longer hold `id` back: queue it (make_ready), or cancel it
    // when the run starts nothing new.
    virtual void unblocked(TaskId id, TimePoint now) = 0;
    virtual void make_ready(TaskId id, TimePoint now) = 0;
    // The task reaches a terminal state (journaled).
    virtual void finish(TaskId id, TaskState state, int code, const std::string& message,
                        TimePoint now) = 0;
    // A task that has not started is cancelled (journaled).
    virtual void cancel_unstarted(TaskId id, const std::string& why) = 0;
    // Journals an event of the task's current attempt without changing its state.
    virtual void journal(TaskId id, TaskState state, int code, std::string detail) = 0;
    // Journals that a replica passed its probe (a second 'running' event of its attempt).
    virtual void journal_ready(TaskId id, const std::string& endpoint) = 0;
    // Asks the launcher to stop the task's attempt (its end comes as an update).
    virtual void stop_attempt(TaskId id) = 0;
    virtual bool stopping_new_work() const = 0;
    virtual bool cancelling() const = 0;
    // The spec of a task of the run (a replica's, say).
    virtual const TaskSpec& spec_of(TaskId id) const = 0;
  };

  // `services` may grow (services submitted while the coordinator runs: a served instance's
  // runs); added() is called for each. Users are counted by count_user(), from the start.
  ServiceLifecycle(const std::deque<ServiceSpec>& services, TaskTable& tasks, Host& host,
                   std::string local_host);

  // services.back() was added. `owned`: whoever submitted it stops it (stop()); it is never
  // stopped as unneeded here.
  void added(bool owned);
  // Stops service `s` (its replicas stop; what has not started is cancelled). Idempotent.
  void stop(ServiceId s) {
    if (stopped_[s] == 0) stop_service(s);
  }
  // Notes that `t`, terminal or not, uses its services (what stop_unneeded() goes by).
  void note_uses(const TaskSpec& t) {
    for (ServiceId s : t.uses) had_users_[s] = 1;
  }

  // A task (not yet terminal) counts, or stops counting, as a user of the services it uses.
  void count_user(const TaskSpec& t, int delta) {
    for (ServiceId s : t.uses) {
      users_left_[s] += delta;
      if (delta > 0) had_users_[s] = 1;
    }
  }
  // Called for every task that reaches a terminal state.
  void on_finish(const TaskSpec& t, TaskState state) {
    count_user(t, -1);
    if (t.kind == TaskKind::service && state == TaskState::cancelled && !host_.cancelling()) {
      ++not_needed_;
    }
  }
  // A task that is not running (it leaves the waiting lists when it starts otherwise).
  void unpark(TaskId id) { tasks_[id].parked = false; }

  enum class Gate : std::uint8_t { open, parked, failed };
  // Whether a task whose dependencies are done may be queued: open; parked (it now waits, pending,
  // for a service it uses to be up); failed (a service it uses failed for good: `why`).
  Gate gate(TaskId id, const TaskSpec& spec, std::string& why);

  // A replica was handed to its launcher, on `node` (an address or a node name); `reported`: see
  // ServiceSupervisor::started.
  void started(const TaskSpec& replica, const std::string& node, const std::string& stdout_path,
               const std::string& workdir, TimePoint now, ReadinessReport reported = {}) {
    supervisor_.started(replica, node, stdout_path, workdir, now, std::move(reported));
  }
  const std::string& endpoints(ServiceId s) const { return supervisor_.endpoints(s); }

  // Runs the probes that are due: journals ready replicas and wakes the users of services that
  // are up; stops replicas that did not start in time.
  void poll(TimePoint now);
  // A replica's attempt ended (its resources are released; `state`, `code` and `message` as the
  // launcher's update says): done, restarted after its back-off, or the service fails.
  void on_end(TaskId id, TaskState state, int code, std::string message, TimePoint now);
  // A service can no longer be up: its waiting users fail with `why`, its replicas stop.
  void service_failed(ServiceId s, const std::string& why, TimePoint now);
  // Stops every service nothing can use any more: all its users ended (or, when tasks may still
  // be submitted — `may_grow`, with `handlers_pending` completion handlers not yet run — or it
  // has no users, all other work ended). Returns whether it stopped any.
  bool stop_unneeded(bool may_grow, bool handlers_pending);
  // Replicas whose restart back-off has passed go back to the queue.
  void release_delayed(TimePoint now);
  // Every running task is a service replica that is ready and not being stopped, and no restart
  // is pending: nothing will free resources by itself.
  bool only_ready_services_running() const;
  // When poll() or release_delayed() must run next.
  std::optional<TimePoint> next_deadline() const;

  // Replicas cancelled because nothing needed them (not a failure of the run).
  std::int64_t not_needed() const { return not_needed_; }

  // The wait before restart number `restart` (1-based): backoff * factor^(restart-1), capped.
  static Duration restart_backoff(const RestartPolicy& p, int restart);

 private:
  void park(ServiceId s, TaskId id) {
    tasks_[id].parked = true;
    parked_[s].push_back(id);
  }
  void wake_users(ServiceId s, TimePoint now);
  void stop_service(ServiceId s);

  const std::deque<ServiceSpec>& services_;  // replicas are tasks: host_.spec_of(replica id)
  TaskTable& tasks_;
  Host& host_;
  ServiceSupervisor supervisor_;
  // Per service: tasks waiting for it to be up. Entries go stale (the task was cancelled or
  // failed meanwhile); TaskRuntime::parked says whether one still counts.
  std::vector<std::vector<TaskId>> parked_;
  std::vector<std::int64_t> users_left_;               // per service: its users not yet terminal
  std::vector<std::uint8_t> had_users_;                // per service: some task uses it
  std::vector<std::uint8_t> stopped_;                  // per service: stop decided
  std::vector<std::uint8_t> owned_;                    // per service: see added()
  std::vector<std::pair<TimePoint, TaskId>> delayed_;  // replicas to restart: a min-heap by time
  std::vector<std::pair<TaskId, std::string>> startup_failures_;  // stopped for not starting
  std::vector<ServiceNotice> notices_;
  std::int64_t not_needed_ = 0;
};

}  // namespace chorus
