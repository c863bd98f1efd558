#include "runtime/coordinator.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "runtime/log_paths.hpp"
#include "runtime/mpi_spread.hpp"
#include "runtime/services/service_supervisor.hpp"

namespace chorus {
namespace {

struct TaskRuntime {
  TaskState state = TaskState::pending;
  std::uint32_t attempt = 0;     // of the latest launch (0 = never launched)
  std::uint32_t waiting_on = 0;  // dependencies not yet succeeded
  std::int32_t node = -1;        // index into nodes while running
  LaunchHandle handle = 0;
  TimePoint started{};            // of the latest attempt
  std::uint64_t fingerprint = 0;  // of the spec as launched; journaled with every event
  bool launched = false;          // a launcher holds it (cancel must go through the launcher)
  bool held = false;              // waits for TaskSubmitter::release() too
  bool stopping = false;          // a service replica we asked to stop: its end is the plan
  bool parked = false;            // waits in ServiceState::parked for a service to be up
};

std::string local_host_name() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? host : "localhost";
}

int timeout_ms_until(TimePoint deadline, TimePoint now) {
  if (deadline <= now) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
  return static_cast<int>(std::min<std::int64_t>(ms, INT_MAX));
}

}  // namespace

class Coordinator::Impl final : public TaskSubmitter {
 public:
  Impl(const WorkflowGraph& graph, StateStore& store, std::string run_id,
       std::vector<NodeInfo> nodes, QueuePolicy& queue, PlacementPolicy& placement,
       LauncherTable launchers, CoordinatorOptions options, CancelToken* cancel,
       RunObserver* observer)
      : graph_(graph),
        store_(store),
        run_id_(std::move(run_id)),
        nodes_(std::move(nodes)),
        queue_(queue),
        placement_(placement),
        launchers_(launchers),
        options_(std::move(options)),
        cancel_(cancel),
        observer_(observer) {
    views_.reserve(nodes_.size());
    for (const auto& n : nodes_) views_.push_back(NodeView{&n, n.capacity, 0});
    if (graph_.workdir.empty()) {
      char buf[4096];
      default_workdir_ = getcwd(buf, sizeof buf) ? buf : ".";
    } else {
      default_workdir_ = graph_.workdir;
    }
  }

  const TaskSpec& spec_at(TaskId id) const {
    return id < base_count_ ? graph_.tasks[id] : added_[id - base_count_];
  }

  Result<TaskId> submit(TaskSpec spec) override {
    if (spec.name.empty()) return invalid_argument("a submitted task needs a name");
    if (names_.empty()) {
      names_.reserve(rt_.size() * 2);
      for (TaskId id = 0; id < rt_.size(); ++id) names_.insert(spec_at(id).name);
    }
    if (names_.count(spec.name) != 0) {
      return invalid_argument("a task named '" + spec.name + "' already exists in this run");
    }
    for (TaskId d : spec.after) {
      if (d >= rt_.size()) {
        return invalid_argument("task '" + spec.name + "' depends on unknown task id " +
                                std::to_string(d));
      }
    }
    if (launchers_[static_cast<std::size_t>(spec.kind)] == nullptr) {
      return invalid_argument("task '" + spec.name + "' is a " + to_string(spec.kind) +
                              " task, which this run cannot launch");
    }
    if (spec.kind == TaskKind::service || spec.service != kNoService) {
      return invalid_argument("task '" + spec.name +
                              "': services are declared in the workflow, not submitted while it "
                              "runs");
    }
    for (ServiceId u : spec.uses) {
      if (u >= graph_.services.size()) {
        return invalid_argument("task '" + spec.name + "' uses an unknown service");
      }
    }
    std::sort(spec.after.begin(), spec.after.end());
    spec.after.erase(std::unique(spec.after.begin(), spec.after.end()), spec.after.end());
    const auto id = static_cast<TaskId>(rt_.size());
    spec.id = id;
    added_.push_back(std::move(spec));
    const TaskSpec& added = added_.back();
    names_.insert(added.name);
    rt_.push_back(TaskRuntime{});
    rt_[id].held = added.held;
    ++progress_.total;
    if (previous_by_name_ != nullptr) {
      auto it = previous_by_name_->find(added.name);
      if (it != previous_by_name_->end()) apply_record(added, *it->second);
    }
    if (rt_[id].state == TaskState::succeeded) {
      skipped_.push_back(id);  // its handler runs too, so the workflow grows as it did before
      return id;
    }
    count_user(added, +1);
    std::uint32_t waiting = rt_[id].held ? 1 : 0;
    bool doomed = false;
    for (TaskId d : added.after) {
      TaskState ds = rt_[d].state;
      if (ds == TaskState::succeeded) continue;
      if (is_terminal(ds)) doomed = true;
      ++waiting;
      extra_dependents_[d].push_back(id);
    }
    rt_[id].waiting_on = waiting;
    if (doomed) {
      cancel_unstarted(id, "a dependency did not succeed");
    } else if (stopping_new_work()) {
      cancel_unstarted(id, cancelling_ ? "run cancelled" : "not started: fail-fast");
    } else if (waiting == 0) {
      make_ready(id, Clock::now());
    }
    return id;
  }

  Status release(TaskId task) override {
    if (task >= rt_.size()) return invalid_argument("release: unknown task id");
    auto& r = rt_[task];
    if (!spec_at(task).held)
      return invalid_argument("task '" + spec_at(task).name + "' is not held");
    if (!r.held) return {};
    r.held = false;
    if (r.state == TaskState::pending && --r.waiting_on == 0) {
      if (stopping_new_work()) {
        cancel_unstarted(task, cancelling_ ? "run cancelled" : "not started: fail-fast");
      } else {
        make_ready(task, Clock::now());
      }
    }
    return {};
  }

  Status add_dependency(TaskId task, TaskId on) override {
    if (task >= rt_.size() || on >= rt_.size() || task == on) {
      return invalid_argument("add_dependency: unknown task id");
    }
    auto& r = rt_[task];
    if (r.state != TaskState::pending || r.waiting_on == 0) {
      return invalid_argument("task '" + spec_at(task).name +
                              "' has already left the pending state");
    }
    const TaskState on_state = rt_[on].state;
    if (on_state == TaskState::succeeded) return {};
    if (is_terminal(on_state)) {
      cancel_unstarted(task, "dependency '" + spec_at(on).name + "' " + to_string(on_state));
      cancel_dependents(task, "dependency '" + spec_at(task).name + "' cancelled");
      return {};
    }
    ++r.waiting_on;
    extra_dependents_[on].push_back(task);
    return {};
  }

  Status fail_unstarted(TaskId task, const std::string& why) override {
    if (task >= rt_.size()) return invalid_argument("fail_unstarted: unknown task id");
    const TaskState st = rt_[task].state;
    if (st != TaskState::pending && st != TaskState::ready) return {};
    if (st == TaskState::ready) queue_.remove(task);
    unpark(task);
    finish(task, TaskState::failed, -1, why, Clock::now());
    return {};
  }

  Result<RunSummary> run(const RunState* previous) {
    started_ = Clock::now();
    const auto n = graph_.tasks.size();
    base_count_ = n;
    rt_.assign(n, TaskRuntime{});
    progress_.total = static_cast<std::int64_t>(n);
    if (Status s = check_launchers(); !s.ok()) return s;
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      slot_of_kind_[k] = k;
      for (std::size_t j = 0; j < k; ++j) {
        if (launchers_[j] == launchers_[k]) {
          slot_of_kind_[k] = j;
          break;
        }
      }
    }
    build_dependents();
    for (TaskId id = 0; id < n; ++id) rt_[id].held = graph_.tasks[id].held;
    if (previous != nullptr) apply_previous(*previous);
    setup_services();
    if (options_.on_task_done && previous != nullptr) {
      for (TaskId id = 0; id < n; ++id) {
        if (rt_[id].state == TaskState::succeeded) skipped_.push_back(id);
      }
    }
    for (TaskId id = 0; id < n; ++id) {
      if (rt_[id].state != TaskState::pending) continue;
      std::uint32_t waiting = rt_[id].held ? 1 : 0;
      for (TaskId d : spec_at(id).after) waiting += rt_[d].state != TaskState::succeeded;
      rt_[id].waiting_on = waiting;
    }
    auto now = Clock::now();
    for (TaskId id = 0; id < n; ++id) {
      if (rt_[id].state == TaskState::pending && rt_[id].waiting_on == 0) make_ready(id, now);
    }
    next_tick_ = started_ + options_.tick_interval;

    while (true) {
      collect_updates();  // first: a task that already ended keeps its outcome
      handle_cancel_requests();
      if (services_) {
        release_delayed(Clock::now());
        poll_services(Clock::now());
        stop_unneeded_services();
      }
      if (!stopping_new_work()) dispatch();
      if (Status s = flush(); !s.ok()) return abort_run(s);
      launch_batch();
      if (!events_.empty()) continue;     // launch failures to journal: go round again at once
      if (run_done_handlers()) continue;  // they may have added ready work
      if (terminal_ == rt_.size()) break;
      // Launched groups ride along with the next round's events; when none came within
      // kGroupJournalDelay, they get a transaction of their own (one per quiet spell, not per
      // task).
      if (!groups_.empty() && Clock::now() >= groups_due_) {
        if (Status s = write_journal(); !s.ok()) return abort_run(s);
      }
      if (services_ && stop_unneeded_services()) continue;
      maybe_tick(Clock::now());
      wait_for_activity();
    }
    report_progress(true);
    return summary();
  }

 private:
  Status check_launchers() const {
    for (const auto& t : graph_.tasks) {
      if (launchers_[static_cast<std::size_t>(t.kind)] == nullptr) {
        return invalid_argument("task '" + t.name + "' is a " + to_string(t.kind) +
                                " task, which this run cannot launch (not supported yet)");
      }
    }
    return {};
  }

  // Dependents in CSR form: one allocation for the whole graph instead of one vector per task.
  void build_dependents() {
    const auto n = graph_.tasks.size();
    dep_offsets_.assign(n + 1, 0);
    for (const auto& t : graph_.tasks) {
      for (TaskId d : t.after) ++dep_offsets_[d + 1];
    }
    for (std::size_t i = 0; i < n; ++i) dep_offsets_[i + 1] += dep_offsets_[i];
    dep_targets_.resize(dep_offsets_[n]);
    std::vector<std::uint32_t> fill(dep_offsets_.begin(), dep_offsets_.end() - 1);
    for (const auto& t : graph_.tasks) {
      for (TaskId d : t.after) dep_targets_[fill[d]++] = t.id;
    }
  }

  void apply_previous(const RunState& previous) {
    previous_names_.reserve(previous.tasks.size());
    for (const auto& r : previous.tasks) previous_names_.emplace(r.name, &r);
    previous_by_name_ = &previous_names_;
    for (const auto& t : graph_.tasks) {
      auto it = previous_names_.find(t.name);
      if (it != previous_names_.end()) apply_record(t, *it->second);
    }
  }

  // What an earlier session of the run says about task `t`.
  void apply_record(const TaskSpec& t, const TaskRecord& r) {
    rt_[t.id].attempt = r.attempt;  // new attempts continue the numbering (logs are kept)
    // A service's success is that it was stopped: it runs again if the resumed work needs it.
    if (t.kind == TaskKind::service) return;
    if (r.state == TaskState::succeeded && r.fingerprint == spec_fingerprint(t)) {
      rt_[t.id].state = TaskState::succeeded;
      ++terminal_;
      ++progress_.skipped;
      ++progress_.succeeded;
    }
  }

  // Runs the completion handler for tasks that ended (their final events are journaled by now)
  // and for tasks skipped on resume. Returns whether it ran any.
  bool run_done_handlers() {
    if (!options_.on_task_done || (done_.empty() && skipped_.empty())) return false;
    while (!done_.empty() || !skipped_.empty()) {
      std::vector<TaskId> batch;
      batch.swap(skipped_.empty() ? done_ : skipped_);
      for (TaskId id : batch) {
        // Copy out: a submission may grow added_ (stable) and rt_ (not stable).
        TaskState outcome = rt_[id].state;
        options_.on_task_done(spec_at(id), outcome, *this);
      }
    }
    return true;
  }

  // Dependencies are done: queue the task, unless a service it uses is not ready (it waits,
  // pending, until it is) or failed for good (so does the task).
  void make_ready(TaskId id, TimePoint now) {
    const TaskSpec& spec = spec_at(id);
    for (ServiceId s : spec.uses) {
      if (const std::string* why = services_->failure(s)) {
        rt_[id].state = TaskState::pending;
        finish(id, TaskState::failed, -1,
               "service '" + graph_.services[s].name + "' is not available: " + *why, now);
        return;
      }
      if (!services_->up(s)) {
        rt_[id].state = TaskState::pending;
        park(s, id);
        return;
      }
    }
    rt_[id].state = TaskState::ready;
    queue_.on_ready(spec, now);
  }

  bool stopping_new_work() const { return cancelling_ || (options_.fail_fast && failed_for_good_); }

  // Places queued tasks while they fit; stops at the first that does not fit now (strict order:
  // the queue policy decides what may overtake what).
  void dispatch() {
    if (queue_.size() == 0) return;
    auto now = Clock::now();
    ClusterView view{views_, now};
    while (true) {
      auto next = queue_.next(view);
      if (!next) return;
      const TaskSpec& spec = spec_at(*next);
      Launcher* launcher = launchers_[static_cast<std::size_t>(spec.kind)];
      std::size_t slot = slot_of_kind_[static_cast<std::size_t>(spec.kind)];
      if (launcher->in_flight() + placed_[slot] >= options_.max_in_flight_per_launcher) return;
      int best = -1;
      double best_score = 0;
      bool later = false;
      for (std::size_t i = 0; i < views_.size(); ++i) {
        Fit fit = placement_.filter(spec, views_[i]);
        if (fit == Fit::now) {
          double s = placement_.score(spec, views_[i]);
          if (best < 0 || s > best_score) {
            best = static_cast<int>(i);
            best_score = s;
          }
        } else if (fit == Fit::later) {
          later = true;
        }
      }
      MpiSpread spread;
      if (spec.kind == TaskKind::mpi && (spec.nodes > 1 || (best < 0 && spec.nodes == 0))) {
        spread = spread_mpi_task(spec, views_, placement_, probe_);
        best = spread.fit == Fit::now ? spread.shares.front().node : -1;
        later = spread.fit == Fit::later;
      }
      if (best < 0) {
        // Not now: wait for resources to free up, unless only services hold them (they end only
        // when the work that needs them is done, so they never would).
        if (later && !only_ready_services_running()) return;
        queue_.remove(spec.id);
        std::string why = later                ? blocked_by_services_message(spec)
                          : spread.why.empty() ? never_fits_message(spec)
                                               : "can never run on these nodes: " + spread.why;
        finish(spec.id, TaskState::failed, -1, why, now);
        if (spec.kind == TaskKind::service) {
          service_failed(spec.service, "replica '" + spec.name + "' " + why, now);
        }
        continue;
      }
      queue_.on_start(spec, now);
      auto& r = rt_[spec.id];
      r.state = TaskState::running;
      r.attempt += 1;
      r.node = best;
      r.started = now;
      ++placed_[slot];
      if (spread.shares.empty()) {
        views_[best].free -= spec.total();
        views_[best].running += 1;
      } else {
        for (const auto& share : spread.shares) {
          views_[share.node].free -= spec.per_rank * share.ranks;
          views_[share.node].running += 1;
        }
      }
      ++progress_.running;
      TaskEvent e;
      e.task = spec.id;
      e.name = spec.name;
      e.attempt = r.attempt;
      e.state = TaskState::running;
      e.time = wall_seconds_now();
      r.fingerprint = spec_fingerprint(spec);
      e.fingerprint = r.fingerprint;
      e.kind = spec.kind;
      e.cores = spec.total().cores;
      if (spread.shares.empty()) {
        e.node = nodes_[best].name;
      } else {
        e.node = event_text_.emplace_back(spread_node_field(spread.shares, views_, spec));
        spreads_[spec.id] = std::move(spread.shares);
      }
      events_.push_back(std::move(e));
      to_launch_.push_back(spec.id);
    }
  }

  // ---- Services: a replica is a task that runs until it is not needed; see ServiceSupervisor.

  void setup_services() {
    if (graph_.services.empty()) return;
    services_ = std::make_unique<ServiceSupervisor>(graph_.services, local_host_name());
    const auto count = graph_.services.size();
    parked_.assign(count, {});
    users_left_.assign(count, 0);
    had_users_.assign(count, 0);
    service_stopped_.assign(count, 0);
    for (TaskId id = 0; id < base_count_; ++id) {
      const TaskSpec& t = graph_.tasks[id];
      if (t.kind == TaskKind::service) ++service_tasks_;
      for (ServiceId s : t.uses) had_users_[s] = 1;
      if (!is_terminal(rt_[id].state)) count_user(t, +1);
    }
  }

  void count_user(const TaskSpec& t, int delta) {
    if (!services_) return;
    for (ServiceId s : t.uses) {
      users_left_[s] += delta;
      if (delta > 0) had_users_[s] = 1;
    }
  }

  void park(ServiceId s, TaskId id) {
    rt_[id].parked = true;
    parked_[s].push_back(id);
  }

  // Parked lists keep stale entries; the flag says whether an entry still counts.
  void unpark(TaskId id) { rt_[id].parked = false; }

  void poll_services(TimePoint now) {
    notices_.clear();
    services_->poll(now, notices_);
    for (auto& n : notices_) {
      auto& r = rt_[n.task];
      if (r.state != TaskState::running) continue;
      if (n.kind == ServiceNotice::Kind::ready) {
        push_ready_event(n.task, n.text);
        if (services_->up(n.service)) wake_users(n.service, now);
      } else if (r.launched && !r.stopping) {
        startup_failures_[n.task] = std::move(n.text);
        (void)launchers_[static_cast<std::size_t>(TaskKind::service)]->cancel(r.handle);
      }
    }
  }

  // The replica passed its probe: journaled as a second 'running' event of the same attempt.
  void push_ready_event(TaskId id, const std::string& endpoint) {
    push_event(id, TaskState::running, 0, std::string(kReadyDetailPrefix) + endpoint);
    TaskEvent& e = events_.back();
    e.cores = spec_at(id).total().cores;
    if (rt_[id].node >= 0) e.node = nodes_[static_cast<std::size_t>(rt_[id].node)].name;
  }

  void wake_users(ServiceId s, TimePoint now) {
    std::vector<TaskId> waiting;
    waiting.swap(parked_[s]);
    for (TaskId id : waiting) {
      auto& r = rt_[id];
      if (!r.parked || r.state != TaskState::pending) continue;
      r.parked = false;
      if (stopping_new_work()) {
        cancel_unstarted(id, cancelling_ ? "run cancelled" : "not started: fail-fast");
      } else {
        make_ready(id, now);  // may park it again behind another service
      }
    }
  }

  void on_service_end(const StateUpdate& u, TimePoint now) {
    const TaskId id = u.task;
    const TaskSpec& spec = spec_at(id);
    const ServiceSpec& svc = graph_.services[spec.service];
    auto& r = rt_[id];
    services_->ended(spec);
    auto [state, code, message] = outcome_of(u);
    if (r.stopping) {
      finish(id, TaskState::succeeded, code, {}, now);  // stopped because nothing needs it
      return;
    }
    if (cancelling_) {
      finish(id, TaskState::cancelled, code, "run cancelled", now);
      return;
    }
    if (auto it = startup_failures_.find(id); it != startup_failures_.end()) {
      state = TaskState::failed;
      message = std::move(it->second);
      startup_failures_.erase(it);
    } else if (state == TaskState::succeeded) {
      message = "exited with status 0 while tasks still needed it";
    }
    const bool crashed = state != TaskState::succeeded;
    const bool wanted = svc.restart.when == RestartWhen::always ||
                        (svc.restart.when == RestartWhen::on_failure && crashed);
    const bool allowed = r.attempt <= static_cast<std::uint32_t>(svc.restart.max_restarts);
    if (wanted && allowed && !stopping_new_work() && service_stopped_[spec.service] == 0) {
      const Duration wait = restart_backoff(svc.restart, static_cast<int>(r.attempt));
      push_event(id, crashed ? TaskState::failed : TaskState::succeeded, code,
                 message + " (restart " + std::to_string(r.attempt) + " of " +
                     std::to_string(svc.restart.max_restarts) + " in " + format_duration(wait) +
                     ")");
      r.state = TaskState::pending;
      delayed_.emplace_back(now + wait, id);
      std::push_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
      return;
    }
    std::string why = "replica '" + spec.name + "' " + message;
    if (wanted && !allowed) {
      why += " after " + std::to_string(svc.restart.max_restarts) + " restart(s)";
    }
    finish(id, crashed ? state : TaskState::succeeded, code, message, now);
    service_failed(spec.service, why, now);
  }

  static Duration restart_backoff(const RestartPolicy& p, int restart) {
    double wait = std::chrono::duration<double>(p.backoff).count();
    for (int i = 1; i < restart; ++i) wait *= p.factor;
    const double cap = std::chrono::duration<double>(p.max_backoff).count();
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(std::min(wait, cap)));
  }

  // A service can no longer be up: its waiting users fail, its other replicas stop.
  void service_failed(ServiceId s, const std::string& why, TimePoint now) {
    services_->fail(s, why);
    std::vector<TaskId> waiting;
    waiting.swap(parked_[s]);
    for (TaskId id : waiting) {
      auto& r = rt_[id];
      if (!r.parked || r.state != TaskState::pending) continue;
      r.parked = false;
      finish(id, TaskState::failed, -1,
             "service '" + graph_.services[s].name + "' is not available: " + why, now);
    }
    stop_service(s);
  }

  void stop_service(ServiceId s) {
    service_stopped_[s] = 1;
    const ServiceSpec& svc = graph_.services[s];
    for (TaskId id : svc.replica_tasks) {
      auto& r = rt_[id];
      if (r.state == TaskState::running) {
        if (!r.stopping) {
          r.stopping = true;
          if (r.launched) {
            (void)launchers_[static_cast<std::size_t>(TaskKind::service)]->cancel(r.handle);
          }
        }
      } else if (!is_terminal(r.state)) {
        cancel_unstarted(id, "not started: no task needs service '" + svc.name + "' any more");
        ++service_not_needed_;
      }
    }
  }

  // Stops every service that nothing can use any more: all its users ended (or, when tasks may
  // still be submitted or it has no users, all other work ended). Returns whether it stopped any.
  bool stop_unneeded_services() {
    const bool work_left = terminal_ - service_terminal_ < rt_.size() - service_tasks_;
    const bool may_grow = static_cast<bool>(options_.on_task_done);
    bool any = false;
    for (ServiceId s = 0; s < graph_.services.size(); ++s) {
      if (service_stopped_[s] != 0) continue;
      bool needed = may_grow ? work_left || !done_.empty() || !skipped_.empty()
                             : (had_users_[s] != 0 ? users_left_[s] > 0 : work_left);
      if (needed) continue;
      stop_service(s);
      any = true;
    }
    return any;
  }

  // Replicas whose restart back-off has passed go back to the queue.
  void release_delayed(TimePoint now) {
    while (!delayed_.empty() && delayed_.front().first <= now) {
      std::pop_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
      TaskId id = delayed_.back().second;
      delayed_.pop_back();
      if (rt_[id].state != TaskState::pending) continue;
      if (service_stopped_[spec_at(id).service] != 0 || stopping_new_work()) {
        cancel_unstarted(id, "not restarted: the run is stopping");
        continue;
      }
      make_ready(id, now);
    }
  }

  // Every running task is a service replica that is ready and not being stopped, and no restart
  // is pending: nothing will free resources by itself.
  bool only_ready_services_running() const {
    if (!services_ || !delayed_.empty()) return false;
    std::int64_t replicas = 0;
    for (const auto& svc : graph_.services) {
      for (TaskId id : svc.replica_tasks) {
        const auto& r = rt_[id];
        if (r.state != TaskState::running) continue;
        if (r.stopping || !services_->ready(spec_at(id))) return false;
        ++replicas;
      }
    }
    return replicas > 0 && replicas == progress_.running;
  }

  std::string blocked_by_services_message(const TaskSpec& spec) const {
    std::string held;
    for (const auto& v : views_) {
      if (!held.empty()) held += ", ";
      held += std::to_string(v.info->capacity.cores - v.free.cores) + " of " +
              std::to_string(v.info->capacity.cores) + " on " + v.info->name;
    }
    return "cannot start: it needs " + to_string(spec.total()) +
           " and the running services hold the cores (" + held +
           ") until the work that uses them is done; give the services fewer cores or replicas";
  }

  std::string never_fits_message(const TaskSpec& spec) const {
    Resources largest;
    for (const auto& node : nodes_) {
      if (node.capacity.cores > largest.cores) largest = node.capacity;
    }
    return "can never run here: needs " + to_string(spec.total()) + ", the largest node has " +
           to_string(largest);
  }

  Status flush() {
    if (events_.empty()) return {};
    return write_journal();
  }

  // Appends the queued events and process groups in one transaction.
  Status write_journal() {
    Status s = store_.append(run_id_, events_, groups_);
    if (!s.ok()) return s;
    groups_.clear();
    if (observer_ != nullptr && observer_->wants_events()) {
      for (const auto& e : events_) observer_->on_event(spec_at(e.task), e);
      observer_->on_events_done();
    }
    events_.clear();
    event_text_.clear();
    return {};
  }

  void launch_batch() {
    if (to_launch_.empty()) return;
    // Swap out: failures below append to events_ and may make tasks ready for the next round.
    launching_.swap(to_launch_);
    placed_.fill(0);
    for (TaskId id : launching_) {
      const TaskSpec& spec = spec_at(id);
      auto& r = rt_[id];
      Launcher* launcher = launchers_[static_cast<std::size_t>(spec.kind)];
      fill_request(spec, r);
      auto handle = launcher->launch(request_);
      if (handle.ok()) {
        r.handle = *handle;
        r.launched = true;
        if (auto group = launcher->process_group(r.handle)) {
          if (groups_.empty()) groups_due_ = Clock::now() + kGroupJournalDelay;
          groups_.push_back({id, r.attempt, group->pgid, group->start_ticks});
        }
        if (spec.kind == TaskKind::service) {
          const NodeInfo& node = nodes_[static_cast<std::size_t>(r.node)];
          services_->started(spec, node.address.empty() ? node.name : node.address,
                             request_.stdout_path, request_.workdir, Clock::now());
          if (r.stopping) (void)launcher->cancel(r.handle);
        }
      } else {
        free_resources(id);
        finish_attempt(id, TaskState::failed, -1, handle.status().message(), Clock::now());
      }
    }
    launching_.clear();
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      if (launchers_[k] != nullptr && !seen_launcher(k)) launchers_[k]->flush();
    }
  }

  void fill_request(const TaskSpec& spec, const TaskRuntime& r) {
    request_.spec = &spec;
    request_.attempt = r.attempt;
    request_.node = nodes_[static_cast<std::size_t>(r.node)].name;
    request_.spread.clear();
    if (spec.kind == TaskKind::mpi) {
      if (auto it = spreads_.find(spec.id); it != spreads_.end()) {
        for (const auto& share : it->second) {
          request_.spread.push_back(
              {nodes_[static_cast<std::size_t>(share.node)].name, share.ranks});
        }
      }
    }
    if (spec.kind == TaskKind::function && spec.uses.empty()) return;
    request_.workdir = spec.workdir.empty() ? default_workdir_ : spec.workdir;
    request_.stdout_path = log_path(options_.log_dir, spec.name, r.attempt, "out");
    request_.stderr_path = log_path(options_.log_dir, spec.name, r.attempt, "err");
    request_.env.clear();
    request_.env.emplace_back("CHORUS_RUN_ID", run_id_);
    if (!options_.run_token.empty())
      request_.env.emplace_back("CHORUS_RUN_TOKEN", options_.run_token);
    request_.env.emplace_back("CHORUS_TASK", spec.name);
    request_.env.emplace_back("CHORUS_ATTEMPT", std::to_string(r.attempt));
    request_.env.emplace_back("CHORUS_NODE", request_.node);
    for (ServiceId s : spec.uses) {
      request_.env.emplace_back(service_env_name(graph_.services[s].name), services_->endpoints(s));
    }
  }

  void free_resources(TaskId id) {
    auto& r = rt_[id];
    if (r.node >= 0) {
      auto spread = spreads_.find(id);
      if (spread == spreads_.end()) {
        views_[r.node].free += spec_at(id).total();
        views_[r.node].running -= 1;
      } else {
        for (const auto& share : spread->second) {
          views_[share.node].free += spec_at(id).per_rank * share.ranks;
          views_[share.node].running -= 1;
        }
        spreads_.erase(spread);
      }
      r.node = -1;
      --progress_.running;
    }
    r.launched = false;
  }

  void collect_updates() {
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      Launcher* l = launchers_[k];
      if (l == nullptr || seen_launcher(k)) continue;
      updates_.clear();
      l->poll(updates_);
      auto now = Clock::now();
      for (const auto& u : updates_) on_update(u, now);
    }
  }

  // The same launcher may serve several kinds: poll it once per round.
  bool seen_launcher(std::size_t k) const {
    for (std::size_t j = 0; j < k; ++j) {
      if (launchers_[j] == launchers_[k]) return true;
    }
    return false;
  }

  void on_update(const StateUpdate& u, TimePoint now) {
    if (u.task >= rt_.size()) return;
    auto& r = rt_[u.task];
    if (r.state != TaskState::running || r.attempt != u.attempt) return;  // stale
    free_resources(u.task);
    if (spec_at(u.task).kind == TaskKind::service) {
      on_service_end(u, now);
      return;
    }
    auto [outcome, code, message] = outcome_of(u);
    if (outcome == TaskState::cancelled) {
      finish(u.task, TaskState::cancelled, code, message.empty() ? "cancelled" : message, now);
    } else {
      finish_attempt(u.task, outcome, code, message, now);
    }
  }

  struct Outcome {
    TaskState state;
    int code;
    std::string message;
  };

  static Outcome outcome_of(const StateUpdate& u) {
    TaskState outcome = TaskState::failed;
    std::string message = u.message;
    switch (u.kind) {
      case UpdateKind::exited:
        outcome = u.succeeded() ? TaskState::succeeded : TaskState::failed;
        if (outcome == TaskState::failed && message.empty()) {
          message = u.signal != 0 ? "killed by signal " + std::to_string(u.signal)
                                  : "exited with status " + std::to_string(u.exit_code);
        }
        break;
      case UpdateKind::timed_out:
        outcome = TaskState::timed_out;
        break;
      case UpdateKind::cancelled:
        outcome = TaskState::cancelled;
        break;
      case UpdateKind::lost:
        outcome = TaskState::failed;
        if (message.empty()) message = "lost by its launcher";
        break;
    }
    int code = u.signal != 0 ? 128 + u.signal : u.exit_code;
    return Outcome{outcome, code, std::move(message)};
  }

  // An attempt ended: succeed, retry, or fail for good.
  void finish_attempt(TaskId id, TaskState outcome, int code, const std::string& message,
                      TimePoint now) {
    const TaskSpec& spec = spec_at(id);
    auto& r = rt_[id];
    bool can_retry = outcome != TaskState::succeeded && !stopping_new_work() &&
                     r.attempt <= static_cast<std::uint32_t>(spec.retries);
    if (!can_retry) {
      finish(id, outcome, code, message, now);
      return;
    }
    push_event(id, outcome, code,
               message + " (attempt " + std::to_string(r.attempt) + " of " +
                   std::to_string(spec.retries + 1) + ", retrying)");
    make_ready(id, now);
  }

  void push_event(TaskId id, TaskState state, int code, std::string detail) {
    TaskEvent e;
    e.task = id;
    e.name = spec_at(id).name;
    e.attempt = rt_[id].attempt;
    e.state = state;
    e.time = wall_seconds_now();
    e.exit_code = code;
    e.fingerprint = rt_[id].fingerprint;
    e.detail = std::move(detail);
    e.kind = spec_at(id).kind;
    events_.push_back(std::move(e));
  }

  // A task reaches a terminal state.
  void finish(TaskId id, TaskState state, int code, const std::string& message, TimePoint now) {
    auto& r = rt_[id];
    const TaskSpec& spec = spec_at(id);
    TimePoint started = r.attempt > 0 ? r.started : now;
    r.state = state;
    ++terminal_;
    if (spec.kind == TaskKind::service) {
      ++service_terminal_;
      if (state == TaskState::cancelled && !cancelling_) ++service_not_needed_;
    }
    count_user(spec, -1);
    if (options_.on_task_done) done_.push_back(id);
    push_event(id, state, code, state == TaskState::succeeded ? std::string{} : message);
    queue_.on_finish(spec, state, now - started, now);
    switch (state) {
      case TaskState::succeeded: {
        ++progress_.succeeded;
        for_each_dependent(id, [&](TaskId d) {
          if (--rt_[d].waiting_on == 0 && rt_[d].state == TaskState::pending) {
            if (stopping_new_work()) {
              cancel_unstarted(d, cancelling_ ? "run cancelled" : "not started: fail-fast");
            } else {
              make_ready(d, now);
            }
          }
        });
        return;
      }
      case TaskState::cancelled:
        ++progress_.cancelled;
        break;
      default: {
        ++progress_.failed;
        failed_for_good_ = true;
        failures_.push_back(
            FailedTask{spec.name, state, message,
                       spec.kind == TaskKind::function
                           ? std::string{}
                           : log_path(options_.log_dir, spec.name, r.attempt, "err")});
        if (options_.fail_fast)
          cancel_all_unstarted("not started: fail-fast after '" + spec.name + "' failed");
        break;
      }
    }
    cancel_dependents(id, "dependency '" + spec.name + "' " + to_string(state));
  }

  void cancel_unstarted(TaskId id, const std::string& why) {
    auto& r = rt_[id];
    if (r.state == TaskState::ready) queue_.remove(id);
    unpark(id);
    r.state = TaskState::cancelled;
    ++terminal_;
    count_user(spec_at(id), -1);
    if (spec_at(id).kind == TaskKind::service) ++service_terminal_;
    ++progress_.cancelled;
    if (options_.on_task_done) done_.push_back(id);
    push_event(id, TaskState::cancelled, 0, why);
  }

  // Every task downstream of `id` that has not started can never run now.
  void cancel_dependents(TaskId id, const std::string& why) {
    stack_.clear();
    stack_.push_back(id);
    while (!stack_.empty()) {
      TaskId u = stack_.back();
      stack_.pop_back();
      for_each_dependent(u, [&](TaskId d) {
        if (rt_[d].state == TaskState::pending) {
          cancel_unstarted(d, why);
          stack_.push_back(d);
        }
      });
    }
  }

  // Calls f(d) for every task d that lists `id` in its `after`: the graph's own edges (CSR), then
  // those of tasks submitted while running.
  template <typename F>
  void for_each_dependent(TaskId id, F&& f) {
    if (id < base_count_) {
      for (auto i = dep_offsets_[id]; i < dep_offsets_[id + 1]; ++i) f(dep_targets_[i]);
    }
    if (extra_dependents_.empty()) return;
    auto it = extra_dependents_.find(id);
    if (it == extra_dependents_.end()) return;
    // f may submit nothing (handlers run later), so the list is stable while we walk it.
    for (TaskId d : it->second) f(d);
  }

  void cancel_all_unstarted(const std::string& why) {
    for (TaskId id = 0; id < rt_.size(); ++id) {
      auto s = rt_[id].state;
      if (s == TaskState::pending || s == TaskState::ready) cancel_unstarted(id, why);
    }
  }

  void handle_cancel_requests() {
    if (cancel_ == nullptr) return;
    int requests = cancel_->requests();
    if (requests == cancel_seen_) return;
    cancel_->drain();
    cancel_seen_ = requests;
    if (!cancelling_) {
      cancelling_ = true;
      progress_.cancelling = true;
      cancel_all_unstarted("run cancelled");
    }
    // Every request (re)sends the cancel: launchers escalate to SIGKILL after their grace.
    for (TaskId id = 0; id < rt_.size(); ++id) {
      if (rt_[id].state == TaskState::running && rt_[id].launched) {
        (void)launchers_[static_cast<std::size_t>(spec_at(id).kind)]->cancel(rt_[id].handle);
      }
    }
  }

  void wait_for_activity() {
    fds_.clear();
    bool any_fdless = false;
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      Launcher* l = launchers_[k];
      if (l == nullptr || seen_launcher(k)) continue;
      int fd = l->wait_fd();
      if (fd >= 0) {
        fds_.push_back(pollfd{fd, POLLIN, 0});
      } else if (l->in_flight() > 0) {
        any_fdless = true;
      }
    }
    if (cancel_ != nullptr) fds_.push_back(pollfd{cancel_->fd(), POLLIN, 0});
    auto now = Clock::now();
    TimePoint deadline = now + std::chrono::seconds(1);
    if (observer_ != nullptr) deadline = std::min(deadline, next_tick_);
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      if (launchers_[k] == nullptr) continue;
      if (auto d = launchers_[k]->next_deadline()) deadline = std::min(deadline, *d);
    }
    if (any_fdless) deadline = std::min(deadline, now + std::chrono::milliseconds(5));
    if (!groups_.empty()) deadline = std::min(deadline, groups_due_);
    if (services_) {
      if (auto d = services_->next_deadline()) deadline = std::min(deadline, *d);
      if (!delayed_.empty()) deadline = std::min(deadline, delayed_.front().first);
    }
    int rc = ::poll(fds_.data(), fds_.size(), timeout_ms_until(deadline, now));
    (void)rc;  // EINTR and timeouts alike: the loop re-polls everything
  }

  void maybe_tick(TimePoint now) {
    if (observer_ == nullptr || now < next_tick_) return;
    next_tick_ = now + options_.tick_interval;
    report_progress(false);
  }

  void report_progress(bool final) {
    if (observer_ == nullptr) return;
    progress_.elapsed_s = std::chrono::duration<double>(Clock::now() - started_).count();
    observer_->on_progress(progress_, final);
  }

  // The journal failed: stop launching, stop what runs (it will rerun on resume), report.
  Status abort_run(const Status& why) {
    groups_.clear();  // what runs now is stopped below: nothing to find on resume
    for (TaskId id = 0; id < rt_.size(); ++id) {
      if (rt_[id].launched) {
        (void)launchers_[static_cast<std::size_t>(spec_at(id).kind)]->cancel(rt_[id].handle);
      }
    }
    auto give_up = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < give_up) {
      std::size_t busy = 0;
      for (auto* l : launchers_) {
        if (l == nullptr) continue;
        updates_.clear();
        l->poll(updates_);
        busy += l->in_flight();
      }
      if (busy == 0) break;
      wait_for_activity();
    }
    return Status(why.code(), "journal write failed, run stopped: " + why.message());
  }

  RunSummary summary() const {
    RunSummary s;
    s.progress = progress_;
    s.failures = failures_;
    if (cancelling_) {
      s.status = RunStatus::cancelled;
    } else if (progress_.failed > 0 || progress_.cancelled > service_not_needed_) {
      s.status = RunStatus::failed;
    } else {
      s.status = RunStatus::succeeded;
    }
    return s;
  }

  const WorkflowGraph& graph_;
  StateStore& store_;
  std::string run_id_;
  std::vector<NodeInfo> nodes_;
  std::vector<NodeView> views_;
  QueuePolicy& queue_;
  PlacementPolicy& placement_;
  LauncherTable launchers_;
  CoordinatorOptions options_;
  CancelToken* cancel_;
  RunObserver* observer_;
  std::string default_workdir_;

  std::vector<TaskRuntime> rt_;
  // Tasks submitted while running (ids from base_count_ on): a deque, so references to them stay
  // valid for launchers that hold them.
  std::size_t base_count_ = 0;
  std::deque<TaskSpec> added_;
  std::unordered_map<TaskId, std::vector<TaskId>> extra_dependents_;
  std::unordered_set<std::string_view> names_;  // built on the first submission
  std::unordered_map<std::string_view, const TaskRecord*> previous_names_;
  const std::unordered_map<std::string_view, const TaskRecord*>* previous_by_name_ = nullptr;
  std::vector<TaskId> done_;     // ended since the handlers last ran
  std::vector<TaskId> skipped_;  // succeeded in an earlier session (resume)
  std::vector<std::uint32_t> dep_offsets_;
  std::vector<TaskId> dep_targets_;
  std::vector<TaskEvent> events_;
  // Process groups launched since the last flush, journaled with the next events (at the latest
  // kGroupJournalDelay after the first of them): until then a SIGKILLed coordinator's resume
  // finds such a task only by its CHORUS_RUN_TOKEN.
  std::vector<TaskGroup> groups_;
  TimePoint groups_due_{};
  static constexpr Duration kGroupJournalDelay = std::chrono::milliseconds(20);
  std::vector<TaskId> to_launch_;
  std::vector<TaskId> launching_;
  std::vector<TaskId> stack_;
  std::vector<StateUpdate> updates_;
  std::vector<pollfd> fds_;
  std::vector<FailedTask> failures_;
  LaunchRequest request_;
  // MPI tasks running across several nodes (rare: the map stays small).
  std::unordered_map<TaskId, std::vector<RankShare>> spreads_;
  TaskSpec probe_;  // scratch for spread_mpi_task
  // Text the queued events_ view (TaskEvent holds string_views) until flushed; a deque keeps it
  // put.
  std::deque<std::string> event_text_;
  std::array<std::size_t, 4> slot_of_kind_{};  // first kind index served by the same launcher
  std::array<std::size_t, 4> placed_{};        // placed this round, per slot, not yet launched
  Progress progress_;
  std::size_t terminal_ = 0;

  // Services (empty unless the graph declares some).
  std::unique_ptr<ServiceSupervisor> services_;
  std::vector<std::vector<TaskId>> parked_;            // per service: tasks waiting for it to be up
  std::vector<std::int64_t> users_left_;               // per service: its users not yet terminal
  std::vector<std::uint8_t> had_users_;                // per service: some task uses it
  std::vector<std::uint8_t> service_stopped_;          // per service: stop decided
  std::vector<std::pair<TimePoint, TaskId>> delayed_;  // replicas to restart: a min-heap by time
  std::unordered_map<TaskId, std::string> startup_failures_;  // replicas stopped for not starting
  std::vector<ServiceNotice> notices_;
  std::size_t service_tasks_ = 0;
  std::size_t service_terminal_ = 0;
  std::int64_t service_not_needed_ = 0;  // replicas cancelled because nothing needed them
  bool cancelling_ = false;
  bool failed_for_good_ = false;
  int cancel_seen_ = 0;
  TimePoint started_;
  TimePoint next_tick_;
};

Coordinator::Coordinator(const WorkflowGraph& graph, StateStore& store, std::string run_id,
                         std::vector<NodeInfo> nodes, QueuePolicy& queue,
                         PlacementPolicy& placement, LauncherTable launchers,
                         CoordinatorOptions options, CancelToken* cancel, RunObserver* observer)
    : impl_(std::make_unique<Impl>(graph, store, std::move(run_id), std::move(nodes), queue,
                                   placement, launchers, std::move(options), cancel, observer)) {}

Coordinator::~Coordinator() = default;

Result<RunSummary> Coordinator::run(const RunState* previous) {
  return impl_->run(previous);
}

}  // namespace chorus
