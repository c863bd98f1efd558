#include "runtime/coordinator.hpp"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "core/host_name.hpp"
#include "core/id_slab.hpp"
#include "runtime/log_paths.hpp"
#include "runtime/services/service_lifecycle.hpp"
#include "runtime/store/node_field.hpp"
#include "runtime/task_table.hpp"
#include "schedulers/netaware/features.hpp"
#include "schedulers/placement/placement_step.hpp"

namespace chorus {
namespace {}  // namespace

// The loop: collect updates, journal, decide, launch, wait. What a task is and may become lives in
// the TaskTable, where it goes in PlacementStep / ClusterState, what services need in
// ServiceLifecycle; this class strings them together and owns the journal and the launches.
class Coordinator::Impl final : public TaskSubmitter, private ServiceLifecycle::Host {
 public:
  Impl(const WorkflowGraph& graph, StateStore& store, std::string run_id,
       std::vector<NodeInfo> nodes, QueuePolicy& queue, PlacementPolicy& placement,
       LauncherTable launchers, CoordinatorOptions options, CancelToken* cancel,
       RunObserver* observer)
      : graph_(graph),
        store_(store),
        run_id_(std::move(run_id)),
        cluster_(std::move(nodes)),
        step_(placement),
        queue_(queue),
        launchers_(launchers),
        options_(std::move(options)),
        cancel_(cancel),
        observer_(observer),
        clock_(options_.clock) {
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

  // ---- TaskSubmitter: work added by completion handlers.

  Result<TaskId> submit(TaskSpec spec) override {
    if (spec.name.empty()) return invalid_argument("a submitted task needs a name");
    if (!names_built_) {
      names_built_ = true;
      names_.reserve(tasks_.size() * 2);
      for (TaskId id = 0; id < tasks_.size(); ++id) names_.insert(spec_at(id).name);
    }
    if (names_.count(spec.name) != 0) {
      return invalid_argument("a task named '" + spec.name + "' already exists in this run");
    }
    for (TaskId d : spec.after) {
      if (!known(d)) {
        return invalid_argument("task '" + spec.name + "' depends on unknown task id " +
                                std::to_string(d));
      }
    }
    if (launchers_[static_cast<std::size_t>(spec.kind)] == nullptr) {
      return invalid_argument("task '" + spec.name + "' is a " + to_string(spec.kind) +
                              " task, which this run cannot launch");
    }
    if (spec.kind == TaskKind::service || spec.service != kNoService) {
      // A replica of a service added by submit_service, in replica order.
      if (spec.kind != TaskKind::service || spec.service >= services_all_.size() ||
          spec.service < graph_.services.size() ||
          spec.replica != static_cast<int>(services_all_[spec.service].replica_tasks.size()) ||
          spec.replica >= services_all_[spec.service].replicas) {
        return invalid_argument("task '" + spec.name +
                                "': a service replica is submitted after its service "
                                "(submit_service), each replica once, in order");
      }
    }
    for (ServiceId u : spec.uses) {
      if (u >= services_all_.size()) {
        return invalid_argument("task '" + spec.name + "' uses an unknown service");
      }
    }
    std::sort(spec.after.begin(), spec.after.end());
    spec.after.erase(std::unique(spec.after.begin(), spec.after.end()), spec.after.end());
    spec.id = static_cast<TaskId>(tasks_.size());
    const TaskSpec& added = added_.push_back(std::move(spec));
    names_.insert(added.name);
    const TaskId id = tasks_.add(added);
    if (added.kind == TaskKind::service) services_all_[added.service].replica_tasks.push_back(id);
    if (services_) services_->note_uses(added);
    if (previous_by_name_ != nullptr) {
      auto it = previous_by_name_->find(added.name);
      if (it != previous_by_name_->end()) apply_record(added, *it->second);
    }
    if (tasks_.state(id) == TaskState::succeeded || tasks_[id].dropped) {
      skipped_.push_back(id);  // its handler runs too, so the workflow grows as it did before
      return id;
    }
    if (services_) services_->count_user(added, +1);
    std::uint32_t waiting = tasks_[id].held ? 1 : 0;
    bool doomed = false;
    for (TaskId d : added.after) {
      TaskState ds = tasks_.state(d);
      if (tasks_.satisfied(d)) continue;
      if (is_terminal(ds)) doomed = true;
      ++waiting;
      tasks_.add_dependent(d, id);
    }
    tasks_[id].waiting_on = waiting;
    if (doomed) {
      cancel_unstarted(id, "a dependency did not succeed");
    } else if (waiting == 0) {
      unblocked(id, now());
    } else if (stopping_new_work()) {
      cancel_unstarted(id, stop_reason());
    }
    return id;
  }

  Result<ServiceId> submit_service(ServiceSpec service) override {
    if (service.replicas < 1) {
      return invalid_argument("service '" + service.name + "' needs at least one replica");
    }
    service.replica_tasks.clear();
    if (!services_) {  // the graph has none (it would exist): the lifecycle starts empty
      ServiceLifecycle::Host& host = *this;  // a private base: converted here, where it is known
      services_ = std::make_unique<ServiceLifecycle>(services_all_, tasks_, host, host_name());
    }
    services_all_.push_back(std::move(service));
    services_->added(true);
    return static_cast<ServiceId>(services_all_.size() - 1);
  }

  Status stop_service(ServiceId service) override {
    if (service >= services_all_.size() || service < graph_.services.size()) {
      return invalid_argument("stop_service: not a submitted service");
    }
    services_->stop(service);
    return {};
  }

  Status forget(TaskId task) override {
    if (!known(task)) return invalid_argument("forget: unknown task id");
    if (task < base_count_) return invalid_argument("forget: a task of the graph stays");
    const TaskSpec& spec = spec_at(task);
    if (!is_terminal(tasks_.state(task))) {
      return invalid_argument("forget: task '" + spec.name + "' has not ended");
    }
    if (tasks_[task].service) {
      return invalid_argument("forget: task '" + spec.name +
                              "' is a service replica, which its service keeps");
    }
    // Then nothing that goes on waits for it (what waits for a task waits for its dependencies).
    for (TaskId d : spec.after) {
      if (!tasks_.forgotten(d) && !is_terminal(tasks_.state(d))) {
        return invalid_argument("forget: task '" + spec.name + "' depends on '" + spec_at(d).name +
                                "', which has not ended");
      }
    }
    names_.erase(spec.name);  // before the spec (and the name it views) goes
    tasks_.forget(task);
    forgetting_.push_back(task);  // released after the next journal write (events view names)
    return {};
  }

  // The specs forget() gave up, once no queued event can view them any more.
  void release_forgotten() {
    for (TaskId id : forgetting_) added_.release(id - base_count_);
    forgetting_.clear();
  }

  // Whether `task` may be asked about (known, not forgotten).
  bool known(TaskId task) const { return task < tasks_.size() && !tasks_.forgotten(task); }

  Status release(TaskId task) override {
    if (!known(task)) return invalid_argument("release: unknown task id");
    auto& r = tasks_[task];
    if (!spec_at(task).held)
      return invalid_argument("task '" + spec_at(task).name + "' is not held");
    if (!r.held) return {};
    r.held = false;
    if (r.state == TaskState::pending && --r.waiting_on == 0) unblocked(task, now());
    return {};
  }

  Status add_dependency(TaskId task, TaskId on) override {
    if (!known(task) || !known(on) || task == on) {
      return invalid_argument("add_dependency: unknown task id");
    }
    auto& r = tasks_[task];
    if (r.state != TaskState::pending || r.waiting_on == 0) {
      return invalid_argument("task '" + spec_at(task).name +
                              "' has already left the pending state");
    }
    const TaskState on_state = tasks_.state(on);
    if (tasks_.satisfied(on)) return {};
    if (is_terminal(on_state)) {
      cancel_unstarted(task, "dependency '" + spec_at(on).name + "' " + to_string(on_state));
      cancel_dependents(task, "dependency '" + spec_at(task).name + "' cancelled");
      return {};
    }
    ++r.waiting_on;
    tasks_.add_dependent(on, task);
    return {};
  }

  Status fail_unstarted(TaskId task, const std::string& why) override {
    if (!known(task)) return invalid_argument("fail_unstarted: unknown task id");
    const TaskState st = tasks_.state(task);
    if (st != TaskState::pending && st != TaskState::ready) return {};
    if (st == TaskState::ready) queue_.remove(task);
    tasks_[task].parked = false;
    finish(task, TaskState::failed, -1, why, now());
    return {};
  }

  Status drop(TaskId task, const std::string& why) override {
    if (!known(task)) return invalid_argument("drop: unknown task id");
    const TaskState st = tasks_.state(task);
    if (is_terminal(st)) return {};
    auto& r = tasks_[task];
    const TaskSpec& spec = spec_at(task);
    const TimePoint t = now();
    const bool was_running = st == TaskState::running;
    const bool launched = r.launched;
    const LaunchHandle handle = r.handle;
    if (st == TaskState::ready) queue_.remove(task);
    r.parked = false;
    if (!tasks_.move(task, TaskState::cancelled)) return {};  // recorded in tasks_.error()
    tasks_.mark_dropped(task);
    if (r.fingerprint == 0) r.fingerprint = spec_fingerprint(spec);  // resume recognises it
    if (services_) services_->on_finish(spec, TaskState::cancelled);
    if (options_.on_task_done) done_.push_back(task);
    push_event(task, TaskState::cancelled, 0, std::string(kDroppedDetailPrefix) + why);
    if (was_running) {
      queue_.on_finish(spec, TaskState::cancelled, t - r.started, t);
      free_resources(task);
      // Stopped after the event above is journaled (stop_dropped, after the next flush).
      if (launched) to_stop_.push_back({task, handle});
    }
    tasks_.for_each_dependent(task, [&](TaskId d) {
      if (--tasks_[d].waiting_on == 0 && tasks_.state(d) == TaskState::pending) unblocked(d, t);
    });
    return {};
  }

  Status cancel(TaskId task, const std::string& why) override {
    if (!known(task)) return invalid_argument("cancel: unknown task id");
    const TaskState st = tasks_.state(task);
    if (is_terminal(st)) return {};
    if (st == TaskState::running) {
      if (tasks_[task].launched) stop_attempt(task);  // ends cancelled through its update
      return {};
    }
    cancel_unstarted(task, why);
    cancel_dependents(task, why);
    return {};
  }

  bool dropped(TaskId task) const override { return known(task) && tasks_[task].dropped; }

  TimePoint now() override { return clock_ == nullptr ? Clock::now() : clock_->now(); }

  std::string_view task_name(TaskId task) const override {
    return known(task) ? std::string_view(spec_at(task).name) : std::string_view();
  }

  // ---- The loop.

  Result<RunSummary> run(const RunState* previous) {
    started_ = now();
    const auto n = graph_.tasks.size();
    base_count_ = n;
    tasks_.reset(graph_.tasks);
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
    if (previous != nullptr) apply_previous(*previous);
    services_all_.assign(graph_.services.begin(), graph_.services.end());
    if (!graph_.services.empty()) {
      ServiceLifecycle::Host& host = *this;  // a private base: converted here, where it is known
      services_ = std::make_unique<ServiceLifecycle>(services_all_, tasks_, host, host_name());
      for (const TaskSpec& t : graph_.tasks) {
        services_->note_uses(t);
        if (!is_terminal(tasks_.state(t.id))) services_->count_user(t, +1);
      }
    }
    if (options_.on_task_done && previous != nullptr) {
      for (TaskId id = 0; id < n; ++id) {
        if (tasks_.state(id) == TaskState::succeeded || tasks_[id].dropped) skipped_.push_back(id);
      }
    }
    for (TaskId id = 0; id < n; ++id) {
      if (tasks_.state(id) != TaskState::pending) continue;
      std::uint32_t waiting = tasks_[id].held ? 1 : 0;
      for (TaskId d : spec_at(id).after) waiting += !tasks_.satisfied(d);
      tasks_[id].waiting_on = waiting;
    }
    auto t = now();
    for (TaskId id = 0; id < n; ++id) {
      if (tasks_.state(id) == TaskState::pending && tasks_[id].waiting_on == 0) make_ready(id, t);
    }
    next_tick_ = started_ + options_.tick_interval;

    while (true) {
      collect_updates();  // first: a task that already ended keeps its outcome
      handle_cancel_requests();
      if (services_) {
        services_->release_delayed(now());
        services_->poll(now());
        stop_unneeded_services();
      }
      if (options_.facts != nullptr) options_.facts->update(cluster_.all_facts(), now());
      if (options_.on_turn) turn_deadline_ = options_.on_turn(now(), *this);
      if (!stopping_new_work()) dispatch();
      if (!tasks_.error().ok()) return stop_run(tasks_.error());
      if (Status s = flush(); !s.ok()) return abort_run(s);
      stop_dropped();
      if (!forgetting_.empty()) release_forgotten();
      launch_batch();
      if (!events_.empty()) continue;     // launch failures to journal: go round again at once
      if (run_done_handlers()) continue;  // they may have added ready work
      if (tasks_.all_terminal() && (!options_.open_ended || cancelling_)) break;
      // Launched groups ride along with the next round's events; when none came within
      // kGroupJournalDelay, they get a transaction of their own (one per quiet spell, not per
      // task).
      if (!groups_.empty() && now() >= groups_due_) {
        if (Status s = write_journal(); !s.ok()) return abort_run(s);
      }
      if (services_ && stop_unneeded_services()) continue;
      maybe_tick(now());
      wait_for_activity();
    }
    if (!tasks_.error().ok()) return stop_run(tasks_.error());
    report_progress(true);
    return summary();
  }

 private:
  double wall_now() { return clock_ == nullptr ? wall_seconds_now() : clock_->wall_seconds(); }

  Status check_launchers() const {
    for (const auto& t : graph_.tasks) {
      if (launchers_[static_cast<std::size_t>(t.kind)] == nullptr) {
        return invalid_argument("task '" + t.name + "' is a " + to_string(t.kind) +
                                " task, which this run cannot launch (not supported yet)");
      }
    }
    return {};
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
    tasks_[t.id].attempt = r.attempt;  // new attempts continue the numbering (logs are kept)
    // A service's success is that it was stopped: it runs again if the resumed work needs it.
    if (t.kind == TaskKind::service) return;
    if (options_.resume_in_place && r.state == TaskState::running && !r.node.empty()) {
      const auto& nodes = cluster_.nodes();
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].name == r.node) {
          in_place_.push_back({t.id, static_cast<int>(i)});
          break;
        }
      }
    }
    if (r.state == TaskState::succeeded && r.fingerprint == spec_fingerprint(t)) {
      tasks_.skip_succeeded(t.id);
    } else if (r.state == TaskState::cancelled && is_dropped_detail(r.detail) &&
               r.fingerprint == spec_fingerprint(t)) {
      tasks_.skip_dropped(t.id);  // its round closed without it: it stays dropped
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
        // Copy out: a submission may grow added_ (stable) and the table (not stable).
        TaskState outcome = tasks_.state(id);
        options_.on_task_done(spec_at(id), outcome, *this);
      }
    }
    return true;
  }

  bool stopping_new_work() const override {
    return cancelling_ || (options_.fail_fast && failed_for_good_);
  }
  bool cancelling() const override { return cancelling_; }
  const TaskSpec& spec_of(TaskId id) const override { return spec_at(id); }
  const char* stop_reason() const {
    return cancelling_ ? "run cancelled" : "not started: fail-fast";
  }

  // Dependencies are done: queue the task, unless the run starts nothing new (cancelled).
  void unblocked(TaskId id, TimePoint now) override {
    if (stopping_new_work()) {
      cancel_unstarted(id, stop_reason());
    } else {
      make_ready(id, now);
    }
  }

  // Dependencies are done (a first attempt, pending) or an attempt ended and another follows
  // (failed or timed out): queue it, unless a service it uses is not up (it waits, pending, until
  // it is) or failed for good (so does the task).
  void make_ready(TaskId id, TimePoint now) override {
    const TaskSpec& spec = spec_at(id);
    if (!spec.uses.empty()) {
      std::string why;
      const auto gate = services_->gate(id, spec, why);
      if (gate != ServiceLifecycle::Gate::open) {
        if (tasks_.state(id) != TaskState::pending) tasks_.move(id, TaskState::pending);
        if (gate == ServiceLifecycle::Gate::failed) finish(id, TaskState::failed, -1, why, now);
        return;
      }
    }
    if (!tasks_.move(id, TaskState::ready)) return;
    queue_.on_ready(spec, now);
  }

  // Places queued tasks while they fit; stops at the first that does not fit now (strict order:
  // the queue policy decides what may overtake what), or passes over one that waits for a busy
  // node by its placement policy's choice when the queue policy allows it (policy.hpp).
  void dispatch() {
    if (queue_.size() == 0) return;
    auto t = now();
    if (!in_place_.empty()) dispatch_in_place(t);
    ClusterView view{cluster_.views(), t};
    queue_.begin_pass();
    while (true) {
      auto next = queue_.next(view);
      if (!next) return;
      const TaskSpec& spec = spec_at(*next);
      Launcher* launcher = launchers_[static_cast<std::size_t>(spec.kind)];
      std::size_t slot = slot_of_kind_[static_cast<std::size_t>(spec.kind)];
      if (launcher->in_flight() + placed_[slot] >= options_.max_in_flight_per_launcher) return;
      Placement where = step_.place(spec, cluster_, t);
      if (where.fit != Fit::now) {
        // Not now: wait for resources to free up, unless only services hold them (they end only
        // when the work that needs them is done, so they never would).
        const bool later = where.fit == Fit::later;
        if (later && where.waiting_for_better) {
          if (queue_.pass_over(spec.id)) continue;
          return;
        }
        if (later && !only_ready_services_running()) return;
        queue_.remove(spec.id);
        std::string why = later ? blocked_by_services_message(spec) : std::move(where.why);
        finish(spec.id, TaskState::failed, -1, why, t);
        if (spec.kind == TaskKind::service) {
          services_->service_failed(spec.service, "replica '" + spec.name + "' " + why, t);
        }
        continue;
      }
      // What the journal keeps of this decision: the policy's explanation, or, for a data task
      // with telemetry under a policy that explains nothing (random, first-fit, ...), the chosen
      // node's features, so every policy's runs give `chorus model train` rows (a model trained
      // only on network-aware's picks would never see the nodes it avoids). Before reserve():
      // the features are those the decision saw.
      const PlacementExplanation* why = step_.explanation();
      if (why == nullptr && where.shares.empty() && !spec.data.empty() &&
          options_.facts != nullptr) {
        why = &observe_features(spec, where.node, t);
      }
      if (!start_placed(spec, where, t, why)) return;
    }
  }

  // Resume in place (CoordinatorOptions::resume_in_place): each task whose attempt ran on a
  // node when the earlier session ended goes there first, while the node has room for it; once
  // tried, a task is placed as any other.
  void dispatch_in_place(TimePoint t) {
    std::size_t kept = 0;
    for (const auto& [id, node] : in_place_) {
      if (tasks_.state(id) != TaskState::ready) {
        if (!is_terminal(tasks_.state(id))) in_place_[kept++] = {id, node};  // parked: later
        continue;
      }
      const TaskSpec& spec = spec_at(id);
      Launcher* launcher = launchers_[static_cast<std::size_t>(spec.kind)];
      std::size_t slot = slot_of_kind_[static_cast<std::size_t>(spec.kind)];
      if (launcher->in_flight() + placed_[slot] >= options_.max_in_flight_per_launcher) {
        in_place_[kept++] = {id, node};
        continue;
      }
      if (!spec.total().fits_in(cluster_.view(node).free)) continue;
      Placement where;
      where.fit = Fit::now;
      where.node = node;
      if (!start_placed(spec, where, t, nullptr)) return;  // on_start takes it off the queue
    }
    in_place_.resize(kept);
  }

  // Starts `spec` where `where` puts it: running in the table, booked, its event queued for the
  // journal, its launch queued. False when the table refused the move (its error stops the run).
  bool start_placed(const TaskSpec& spec, Placement& where, TimePoint t,
                    const PlacementExplanation* why) {
    if (!tasks_.move(spec.id, TaskState::running)) return false;
    queue_.on_start(spec, t);
    auto& r = tasks_[spec.id];
    r.attempt += 1;
    r.node = where.node;
    r.started = t;
    ++placed_[slot_of_kind_[static_cast<std::size_t>(spec.kind)]];
    cluster_.reserve(spec, where);
    TaskEvent e;
    e.task = spec.id;
    e.name = spec.name;
    e.attempt = r.attempt;
    e.state = TaskState::running;
    e.time = wall_now();
    r.fingerprint = spec_fingerprint(spec);
    e.fingerprint = r.fingerprint;
    e.kind = spec.kind;
    e.cores = spec.total().cores;
    if (where.shares.empty()) {
      e.node = cluster_.node(where.node).name;
    } else {
      std::string& field = event_text_.emplace_back();
      for (const auto& share : where.shares) {
        append_node_field(field, cluster_.node(share.node).name,
                          static_cast<std::int64_t>(share.ranks) * spec.per_rank.cores);
      }
      e.node = field;
      spreads_[spec.id] = std::move(where.shares);
    }
    events_.push_back(std::move(e));
    if (why != nullptr) queue_placement(spec.id, r.attempt, *why);
    to_launch_.push_back(spec.id);
    return true;
  }

  // The chosen node's features as an explanation with no estimate (reused scratch).
  const PlacementExplanation& observe_features(const TaskSpec& spec, int node, TimePoint t) {
    observed_.clear();
    observed_.basis.assign("features only (placed by ").append(step_.policy().name()).append(")");
    ExplainedCandidate& c = observed_.candidates.emplace_back();
    c.node = node;
    c.has_features = true;
    fill_features(spec, cluster_.view(node), t, c.features);
    return observed_;
  }

  // Keeps the policy's explanation of an attempt's placement for the journal, with the attempt's
  // `running` event in the same transaction. The slots are reused: steady state allocates nothing.
  void queue_placement(TaskId id, std::uint32_t attempt, const PlacementExplanation& why) {
    if (placements_used_ == placement_pool_.size()) placement_pool_.emplace_back();
    JournaledPlacement& p = placement_pool_[placements_used_++];
    p.task = id;
    p.attempt = attempt;
    p.basis.assign(why.basis);
    const std::size_t n = why.candidates.size();
    p.features.resize(n);
    p.candidates.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const ExplainedCandidate& c = why.candidates[i];
      p.features[i] = c.features;
      p.candidates[i].node = c.node >= 0 ? std::string_view(cluster_.node(c.node).name) : "";
      p.candidates[i].predicted_s = c.predicted_s;
      p.candidates[i].features =
          c.has_features ? std::span<const float>(p.features[i]) : std::span<const float>{};
    }
  }

  std::string blocked_by_services_message(const TaskSpec& spec) const {
    std::string held;
    for (const auto& v : cluster_.views()) {
      if (!held.empty()) held += ", ";
      held += std::to_string(v.info->capacity.cores - v.free.cores) + " of " +
              std::to_string(v.info->capacity.cores) + " on " + v.info->name;
    }
    return "cannot start: it needs " + to_string(spec.total()) +
           " and the running services hold the cores (" + held +
           ") until the work that uses them is done; give the services fewer cores or replicas";
  }

  // ---- Services: see ServiceLifecycle; what it asks of the loop.

  bool stop_unneeded_services() {
    return services_->stop_unneeded(static_cast<bool>(options_.on_task_done),
                                    !done_.empty() || !skipped_.empty());
  }

  bool only_ready_services_running() const {
    return services_ && services_->only_ready_services_running();
  }

  void journal(TaskId id, TaskState state, int code, std::string detail) override {
    push_event(id, state, code, std::move(detail));
  }

  // The replica passed its probe: journaled as a second 'running' event of the same attempt.
  void journal_ready(TaskId id, const std::string& endpoint) override {
    push_event(id, TaskState::running, 0, std::string(kReadyDetailPrefix) + endpoint);
    TaskEvent& e = events_.back();
    e.cores = spec_at(id).total().cores;
    if (tasks_[id].node >= 0) e.node = cluster_.node(tasks_[id].node).name;
  }

  void stop_attempt(TaskId id) override {
    (void)launchers_[static_cast<std::size_t>(spec_at(id).kind)]->cancel(tasks_[id].handle);
  }

  // ---- The journal.

  Status flush() {
    if (events_.empty()) return {};
    return write_journal();
  }

  // Appends the queued events and process groups in one transaction.
  Status write_journal() {
    placement_records_.clear();
    const std::string_view policy = step_.policy().name();
    for (std::size_t i = 0; i < placements_used_; ++i) {
      const JournaledPlacement& p = placement_pool_[i];
      placement_records_.push_back({p.task, p.attempt, policy, p.basis, p.candidates});
    }
    Status s = store_.append(run_id_, events_, groups_, placement_records_);
    if (!s.ok()) return s;
    groups_.clear();
    placements_used_ = 0;
    if (observer_ != nullptr && observer_->wants_events()) {
      for (const auto& e : events_) observer_->on_event(spec_at(e.task), e);
      observer_->on_events_done();
    }
    events_.clear();
    event_text_.clear();
    return {};
  }

  void push_event(TaskId id, TaskState state, int code, std::string detail) {
    TaskEvent e;
    e.task = id;
    e.name = spec_at(id).name;
    e.attempt = tasks_[id].attempt;
    e.state = state;
    e.time = wall_now();
    e.exit_code = code;
    e.fingerprint = tasks_[id].fingerprint;
    e.detail = std::move(detail);
    e.kind = spec_at(id).kind;
    events_.push_back(std::move(e));
  }

  // ---- Launches.

  void launch_batch() {
    if (to_launch_.empty()) return;
    // Swap out: failures below append to events_ and may make tasks ready for the next round.
    launching_.swap(to_launch_);
    placed_.fill(0);
    for (TaskId id : launching_) {
      const TaskSpec& spec = spec_at(id);
      auto& r = tasks_[id];
      Launcher* launcher = launchers_[static_cast<std::size_t>(spec.kind)];
      fill_request(spec, r);
      auto handle = launcher->launch(request_);
      if (handle.ok()) {
        r.handle = *handle;
        r.launched = true;
        if (auto group = launcher->process_group(r.handle)) {
          if (groups_.empty()) groups_due_ = now() + kGroupJournalDelay;
          groups_.push_back({id, r.attempt, group->pgid, group->start_ticks});
        }
        if (spec.kind == TaskKind::service) {
          const NodeInfo& node = cluster_.node(r.node);
          ReadinessReport reported;
          if (launcher->readiness(r.handle)) {
            reported = [launcher, handle = r.handle] { return launcher->readiness(handle); };
          }
          services_->started(spec, node.address.empty() ? node.name : node.address,
                             request_.stdout_path, request_.workdir, now(), std::move(reported));
          if (r.stopping) (void)launcher->cancel(r.handle);
        }
      } else {
        free_resources(id);
        finish_attempt(id, TaskState::failed, -1, handle.status().message(), now());
      }
    }
    launching_.clear();
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      if (launchers_[k] != nullptr && !seen_launcher(k)) launchers_[k]->flush();
    }
  }

  std::string stderr_path_of(const TaskSpec& spec, std::uint32_t attempt) const {
    const TaskHome home = home_of(spec);
    return log_path(home.log_dir, home.name, attempt, "err");
  }

  TaskHome home_of(const TaskSpec& spec) const {
    if (options_.home_of) return options_.home_of(spec);
    return TaskHome{run_id_, options_.log_dir, spec.name, nullptr};
  }

  void fill_request(const TaskSpec& spec, const TaskRuntime& r) {
    request_.spec = &spec;
    request_.run_as = nullptr;
    request_.attempt = r.attempt;
    request_.node = cluster_.node(r.node).name;
    request_.spread.clear();
    request_.service = spec.kind == TaskKind::service ? &services_all_[spec.service] : nullptr;
    if (spec.kind == TaskKind::mpi) {
      if (auto it = spreads_.find(spec.id); it != spreads_.end()) {
        for (const auto& share : it->second) {
          request_.spread.push_back({cluster_.node(share.node).name, share.ranks});
        }
      }
    }
    if (spec.kind == TaskKind::function && spec.uses.empty()) return;
    request_.workdir = spec.workdir.empty() ? default_workdir_ : spec.workdir;
    const TaskHome home = home_of(spec);
    request_.stdout_path = log_path(home.log_dir, home.name, r.attempt, "out");
    request_.stderr_path = log_path(home.log_dir, home.name, r.attempt, "err");
    request_.run_as = home.run_as;
    request_.env.clear();
    request_.env.emplace_back("CHORUS_RUN_ID", home.run_id);
    if (!options_.run_token.empty())
      request_.env.emplace_back("CHORUS_RUN_TOKEN", options_.run_token);
    request_.env.emplace_back("CHORUS_TASK", home.name);
    request_.env.emplace_back("CHORUS_ATTEMPT", std::to_string(r.attempt));
    request_.env.emplace_back("CHORUS_NODE", request_.node);
    for (ServiceId s : spec.uses) {
      request_.env.emplace_back(service_env_name(services_all_[s].name), services_->endpoints(s));
    }
  }

  // The attempt holds no node any more (it ended, or its launch failed).
  void free_resources(TaskId id) {
    auto& r = tasks_[id];
    if (r.node >= 0) {
      where_.node = r.node;
      where_.shares.clear();
      if (!spreads_.empty()) {
        if (auto spread = spreads_.find(id); spread != spreads_.end()) {
          where_.shares.swap(spread->second);
          spreads_.erase(spread);
        }
      }
      cluster_.release(spec_at(id), where_);
      r.node = -1;
    }
    r.launched = false;
  }

  // Stops the processes of tasks dropped by a quorum, now that their end is journaled.
  void stop_dropped() {
    for (const auto& [task, handle] : to_stop_) {
      (void)launchers_[static_cast<std::size_t>(spec_at(task).kind)]->cancel(handle);
    }
    to_stop_.clear();
  }

  // ---- Updates.

  void collect_updates() {
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      Launcher* l = launchers_[k];
      if (l == nullptr || seen_launcher(k)) continue;
      updates_.clear();
      l->poll(updates_);
      auto t = now();
      for (const auto& u : updates_) on_update(u, t);
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
    if (!known(u.task)) return;  // a dropped task's late end, after its run was forgotten
    auto& r = tasks_[u.task];
    if (r.state != TaskState::running || r.attempt != u.attempt) return;  // stale
    free_resources(u.task);
    auto [outcome, code, message] = outcome_of(u);
    if (spec_at(u.task).kind == TaskKind::service) {
      services_->on_end(u.task, outcome, code, std::move(message), now);
    } else if (outcome == TaskState::cancelled) {
      finish(u.task, TaskState::cancelled, code, message.empty() ? "cancelled" : message, now);
    } else {
      const bool lost = u.kind == UpdateKind::lost && r.requeued < options_.lost_requeues;
      if (lost) ++r.requeued;
      finish_attempt(u.task, outcome, code, message, now, lost);
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

  // ---- Ends.

  // An attempt ended: succeed, retry, or fail for good.
  // `requeue`: the attempt was lost by its launcher and is queued again whatever the retries.
  void finish_attempt(TaskId id, TaskState outcome, int code, const std::string& message,
                      TimePoint now, bool requeue = false) {
    const TaskSpec& spec = spec_at(id);
    auto& r = tasks_[id];
    // Requeued losses are extra attempts: they do not use the task's retries.
    bool can_retry =
        outcome != TaskState::succeeded && !stopping_new_work() &&
        (requeue || r.attempt <= static_cast<std::uint32_t>(spec.retries) + r.requeued);
    if (!can_retry) {
      finish(id, outcome, code, message, now);
      return;
    }
    // A retry is a new attempt: this one ends (journaled), the next is queued (core/task_state).
    if (!tasks_.move(id, outcome)) return;
    push_event(id, outcome, code,
               requeue ? message + " (lost with its node; queued again, not counted as a retry)"
                       : message + " (attempt " + std::to_string(r.attempt) + " of " +
                             std::to_string(spec.retries + 1 + r.requeued) + ", retrying)");
    make_ready(id, now);
  }

  // A task reaches a terminal state.
  void finish(TaskId id, TaskState state, int code, const std::string& message,
              TimePoint now) override {
    auto& r = tasks_[id];
    const TaskSpec& spec = spec_at(id);
    TimePoint started = r.attempt > 0 ? r.started : now;
    if (!tasks_.move(id, state)) return;
    if (services_) services_->on_finish(spec, state);
    if (options_.on_task_done) done_.push_back(id);
    push_event(id, state, code, state == TaskState::succeeded ? std::string{} : message);
    queue_.on_finish(spec, state, now - started, now);
    switch (state) {
      case TaskState::succeeded:
        tasks_.for_each_dependent(id, [&](TaskId d) {
          if (--tasks_[d].waiting_on == 0 && tasks_.state(d) == TaskState::pending) {
            unblocked(d, now);
          }
        });
        return;
      case TaskState::cancelled:
        break;
      default:
        failed_for_good_ = true;
        // An open-ended loop (a served instance) has no summary to give: its runs' failures are
        // in the journal, and a list here would grow for as long as it serves.
        if (!options_.open_ended) {
          failures_.push_back(FailedTask{
              spec.name, state, message,
              spec.kind == TaskKind::function ? std::string{} : stderr_path_of(spec, r.attempt)});
        }
        if (options_.fail_fast)
          cancel_all_unstarted("not started: fail-fast after '" + spec.name + "' failed");
        break;
    }
    cancel_dependents(id, "dependency '" + spec.name + "' " + to_string(state));
  }

  void cancel_unstarted(TaskId id, const std::string& why) override {
    auto& r = tasks_[id];
    if (r.state == TaskState::ready) queue_.remove(id);
    r.parked = false;
    if (!tasks_.move(id, TaskState::cancelled)) return;
    if (services_) services_->count_user(spec_at(id), -1);
    if (options_.on_task_done) done_.push_back(id);
    push_event(id, TaskState::cancelled, 0, why);
  }

  // Every task downstream of `id` that has not started can never run now.
  void cancel_dependents(TaskId id, const std::string& why) {
    tasks_.cascade(id, [&](TaskId d) { cancel_unstarted(d, why); });
  }

  void cancel_all_unstarted(const std::string& why) {
    for (TaskId id = 0; id < tasks_.size(); ++id) {
      if (tasks_.forgotten(id)) continue;
      auto s = tasks_.state(id);
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
      cancel_all_unstarted("run cancelled");
    }
    // Every request (re)sends the cancel: launchers escalate to SIGKILL after their grace.
    for (TaskId id = 0; id < tasks_.size(); ++id) {
      if (tasks_.forgotten(id)) continue;
      if (tasks_.state(id) == TaskState::running && tasks_[id].launched) stop_attempt(id);
    }
  }

  // ---- Waiting.

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
    if (options_.wake_fd >= 0) fds_.push_back(pollfd{options_.wake_fd, POLLIN, 0});
    auto t = now();
    TimePoint deadline = t + std::chrono::seconds(1);
    if (observer_ != nullptr) deadline = std::min(deadline, next_tick_);
    for (std::size_t k = 0; k < launchers_.size(); ++k) {
      if (launchers_[k] == nullptr) continue;
      if (auto d = launchers_[k]->next_deadline()) deadline = std::min(deadline, *d);
    }
    if (any_fdless) deadline = std::min(deadline, t + std::chrono::milliseconds(5));
    if (!groups_.empty()) deadline = std::min(deadline, groups_due_);
    if (services_) {
      if (auto d = services_->next_deadline()) deadline = std::min(deadline, *d);
    }
    if (turn_deadline_) deadline = std::min(deadline, *turn_deadline_);
    (clock_ == nullptr ? real_loop_clock() : *clock_).wait(fds_, deadline);
  }

  void maybe_tick(TimePoint t) {
    if (observer_ == nullptr || t < next_tick_) return;
    next_tick_ = t + options_.tick_interval;
    report_progress(false);
  }

  void report_progress(bool final) {
    if (observer_ == nullptr) return;
    elapsed_s_ = std::chrono::duration<double>(now() - started_).count();
    observer_->on_progress(progress(), final);
  }

  // ---- Stopping early.

  // Stops what runs (it reruns on resume) and waits, at most 30 s, for the launchers to see it
  // end.
  void stop_everything() {
    groups_.clear();  // what runs now is stopped below: nothing to find on resume
    for (TaskId id = 0; id < tasks_.size(); ++id) {
      if (!tasks_.forgotten(id) && tasks_[id].launched) stop_attempt(id);
    }
    auto give_up = now() + std::chrono::seconds(30);
    while (now() < give_up) {
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
  }

  // The journal failed: stop launching, stop what runs, report.
  Status abort_run(const Status& why) {
    stop_everything();
    return Status(why.code(), "journal write failed, run stopped: " + why.message());
  }

  // The coordinator broke its own rules (a move outside the state machine): stop, report.
  Status stop_run(Status why) {
    stop_everything();
    return why;
  }

  Progress progress() const {
    Progress p = tasks_.progress();
    p.elapsed_s = elapsed_s_;  // as of the last report
    p.cancelling = cancelling_;
    return p;
  }

  RunSummary summary() const {
    RunSummary s;
    s.progress = progress();
    s.failures = failures_;
    const std::int64_t not_needed = services_ ? services_->not_needed() : 0;
    if (cancelling_) {
      s.status = RunStatus::cancelled;
    } else if (s.progress.failed > 0 || s.progress.cancelled > not_needed + s.progress.dropped) {
      s.status = RunStatus::failed;
    } else {
      s.status = RunStatus::succeeded;
    }
    return s;
  }

  const WorkflowGraph& graph_;
  // The graph's services, then those submitted (submit_service): a deque, ServiceLifecycle and
  // launch requests keep references.
  std::deque<ServiceSpec> services_all_;
  StateStore& store_;
  std::string run_id_;
  ClusterState cluster_;
  PlacementStep step_;
  QueuePolicy& queue_;
  LauncherTable launchers_;
  CoordinatorOptions options_;
  CancelToken* cancel_;
  RunObserver* observer_;
  LoopClock* clock_;  // nullptr: the real one (called directly: no virtual call per event)
  std::string default_workdir_;

  TaskTable tasks_;
  // Tasks submitted while running (ids from base_count_ on): in blocks that never move, so
  // references stay valid for launchers that hold them; forgotten ones give their memory back.
  std::size_t base_count_ = 0;
  IdSlab<TaskSpec> added_;          // by id - base_count_
  std::vector<TaskId> forgetting_;  // forget()ten, released after the next journal write
  std::unordered_set<std::string_view> names_;  // built on the first submission
  bool names_built_ = false;
  std::unordered_map<std::string_view, const TaskRecord*> previous_names_;
  const std::unordered_map<std::string_view, const TaskRecord*>* previous_by_name_ = nullptr;
  std::vector<TaskId> done_;     // ended since the handlers last ran
  std::vector<TaskId> skipped_;  // succeeded in an earlier session (resume)
  // Resume in place: tasks running on a node when the earlier session ended, with that node.
  std::vector<std::pair<TaskId, int>> in_place_;
  std::vector<TaskEvent> events_;
  // Process groups launched since the last flush, journaled with the next events (at the latest
  // kGroupJournalDelay after the first of them): until then a SIGKILLed coordinator's resume
  // finds such a task only by its CHORUS_RUN_TOKEN.
  std::vector<TaskGroup> groups_;
  // Placement explanations waiting for the next journal write (the first placements_used_ of
  // the pool; the rest keep their capacity for later decisions).
  struct JournaledPlacement {
    TaskId task = kNoTask;
    std::uint32_t attempt = 0;
    std::string basis;
    std::vector<FeatureVector> features;
    std::vector<PlacementCandidate> candidates;  // views into features and the nodes' names
  };
  std::vector<JournaledPlacement> placement_pool_;
  std::size_t placements_used_ = 0;
  std::vector<PlacementRecord> placement_records_;
  PlacementExplanation observed_;  // observe_features' scratch
  TimePoint groups_due_{};
  static constexpr Duration kGroupJournalDelay = std::chrono::milliseconds(20);
  std::vector<TaskId> to_launch_;
  // Tasks dropped by a quorum while running: stopped once their end is journaled.
  struct DroppedAttempt {
    TaskId task;
    LaunchHandle handle;
  };
  std::vector<DroppedAttempt> to_stop_;
  std::optional<TimePoint> turn_deadline_;  // the turn handler's
  std::vector<TaskId> launching_;
  std::vector<StateUpdate> updates_;
  std::vector<pollfd> fds_;
  std::vector<FailedTask> failures_;
  LaunchRequest request_;
  // MPI tasks running across several nodes (rare: the map stays small).
  std::unordered_map<TaskId, std::vector<RankShare>> spreads_;
  Placement where_;  // free_resources' scratch
  // Text the queued events_ view (TaskEvent holds string_views) until flushed; a deque keeps it
  // put.
  std::deque<std::string> event_text_;
  std::array<std::size_t, kTaskKindCount> slot_of_kind_{};  // first kind served by its launcher
  std::array<std::size_t, kTaskKindCount> placed_{};  // placed this round, per slot, not launched

  std::unique_ptr<ServiceLifecycle> services_;  // null unless the graph declares services
  bool cancelling_ = false;
  bool failed_for_good_ = false;
  int cancel_seen_ = 0;
  TimePoint started_;
  TimePoint next_tick_;
  double elapsed_s_ = 0;
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
