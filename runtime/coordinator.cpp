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
};

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
    std::sort(spec.after.begin(), spec.after.end());
    spec.after.erase(std::unique(spec.after.begin(), spec.after.end()), spec.after.end());
    const auto id = static_cast<TaskId>(rt_.size());
    spec.id = id;
    added_.push_back(std::move(spec));
    const TaskSpec& added = added_.back();
    names_.insert(added.name);
    rt_.push_back(TaskRuntime{});
    ++progress_.total;
    if (previous_by_name_ != nullptr) {
      auto it = previous_by_name_->find(added.name);
      if (it != previous_by_name_->end()) apply_record(added, *it->second);
    }
    if (rt_[id].state == TaskState::succeeded) {
      skipped_.push_back(id);  // its handler runs too, so the workflow grows as it did before
      return id;
    }
    std::uint32_t waiting = 0;
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
    if (previous != nullptr) apply_previous(*previous);
    if (options_.on_task_done && previous != nullptr) {
      for (TaskId id = 0; id < n; ++id) {
        if (rt_[id].state == TaskState::succeeded) skipped_.push_back(id);
      }
    }
    for (TaskId id = 0; id < n; ++id) {
      if (rt_[id].state != TaskState::pending) continue;
      std::uint32_t waiting = 0;
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
      if (!stopping_new_work()) dispatch();
      if (Status s = flush(); !s.ok()) return abort_run(s);
      launch_batch();
      if (!events_.empty()) continue;     // launch failures to journal: go round again at once
      if (run_done_handlers()) continue;  // they may have added ready work
      if (terminal_ == rt_.size()) break;
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

  void make_ready(TaskId id, TimePoint now) {
    rt_[id].state = TaskState::ready;
    queue_.on_ready(spec_at(id), now);
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
      if (best < 0) {
        if (later) return;  // not now: wait for resources to free up
        queue_.remove(spec.id);
        finish(spec.id, TaskState::failed, -1, never_fits_message(spec), now);
        continue;
      }
      queue_.on_start(spec, now);
      auto& r = rt_[spec.id];
      r.state = TaskState::running;
      r.attempt += 1;
      r.node = best;
      r.started = now;
      ++placed_[slot];
      views_[best].free -= spec.total();
      views_[best].running += 1;
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
      e.node = nodes_[best].name;
      events_.push_back(std::move(e));
      to_launch_.push_back(spec.id);
    }
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
    Status s = store_.append(run_id_, events_);
    if (!s.ok()) return s;
    if (observer_ != nullptr && observer_->wants_events()) {
      for (const auto& e : events_) observer_->on_event(spec_at(e.task), e);
    }
    events_.clear();
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
      } else {
        release(id);
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
    if (spec.kind == TaskKind::function) return;
    request_.workdir = spec.workdir.empty() ? default_workdir_ : spec.workdir;
    request_.stdout_path = log_path(options_.log_dir, spec.name, r.attempt, "out");
    request_.stderr_path = log_path(options_.log_dir, spec.name, r.attempt, "err");
    request_.env.clear();
    request_.env.emplace_back("CHORUS_RUN_ID", run_id_);
    request_.env.emplace_back("CHORUS_TASK", spec.name);
    request_.env.emplace_back("CHORUS_ATTEMPT", std::to_string(r.attempt));
    request_.env.emplace_back("CHORUS_NODE", request_.node);
  }

  void release(TaskId id) {
    auto& r = rt_[id];
    if (r.node >= 0) {
      views_[r.node].free += spec_at(id).total();
      views_[r.node].running -= 1;
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
    release(u.task);
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
    if (outcome == TaskState::cancelled) {
      finish(u.task, TaskState::cancelled, code, message.empty() ? "cancelled" : message, now);
    } else {
      finish_attempt(u.task, outcome, code, message, now);
    }
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
    r.state = TaskState::ready;
    queue_.on_ready(spec, now);
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
    events_.push_back(std::move(e));
  }

  // A task reaches a terminal state.
  void finish(TaskId id, TaskState state, int code, const std::string& message, TimePoint now) {
    auto& r = rt_[id];
    const TaskSpec& spec = spec_at(id);
    TimePoint started = r.attempt > 0 ? r.started : now;
    r.state = state;
    ++terminal_;
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
    r.state = TaskState::cancelled;
    ++terminal_;
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
    } else if (progress_.failed > 0 || progress_.cancelled > 0) {
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
  std::vector<TaskId> to_launch_;
  std::vector<TaskId> launching_;
  std::vector<TaskId> stack_;
  std::vector<StateUpdate> updates_;
  std::vector<pollfd> fds_;
  std::vector<FailedTask> failures_;
  LaunchRequest request_;
  std::array<std::size_t, 4> slot_of_kind_{};  // first kind index served by the same launcher
  std::array<std::size_t, 4> placed_{};        // placed this round, per slot, not yet launched
  Progress progress_;
  std::size_t terminal_ = 0;
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
