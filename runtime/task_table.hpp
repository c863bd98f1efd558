// TaskTable: the coordinator's per-task runtime state — each task's state and attempt, what it
// waits for, who waits for it, and the run's counters (terminal tasks, progress).
//
// Every state change goes through move(), which applies the state machine of core/task_state.hpp
// (is_valid_transition) and keeps the counters equal to what the states say. A move the machine
// forbids is not made: it is recorded as an internal_error (error()), which the coordinator
// stops the run with and returns (release builds too: the check is one table lookup). Loading a
// task's state from an earlier session of the run (skip_succeeded) is the one change that is not a
// move.
//
// Not thread-safe: the coordinator's thread only. No allocation per move.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/id_slab.hpp"
#include "core/status.hpp"
#include "core/task_spec.hpp"
#include "core/task_state.hpp"
#include "core/units.hpp"
#include "runtime/run_observer.hpp"

namespace chorus {

struct TaskRuntime {
  TaskState state = TaskState::pending;
  std::uint32_t attempt = 0;     // of the latest launch (0 = never launched)
  std::uint32_t waiting_on = 0;  // dependencies not yet succeeded (+1 while held)
  std::uint32_t requeued = 0;  // attempts lost and queued again (CoordinatorOptions::lost_requeues)
  std::int32_t node = -1;      // index into the nodes while placed
  LaunchHandle handle = 0;
  TimePoint started{};            // of the latest attempt
  std::uint64_t fingerprint = 0;  // of the spec as launched; journaled with every event
  bool launched = false;          // a launcher holds it (cancel must go through the launcher)
  bool held = false;              // waits for TaskSubmitter::release() too
  bool stopping = false;          // a service replica we asked to stop: its end is the plan
  bool parked = false;            // waits in pending for a service it uses to be up
  bool service = false;           // kind service (counted apart: see work_left())
  bool dropped = false;           // cancelled by a quorum: its dependents count it as done
};

class TaskTable {
 public:
  // The graph's tasks, all pending (held as their specs say), with their dependents.
  void reset(const std::vector<TaskSpec>& tasks);
  // A task submitted while the run goes on (its id is size() before the call), pending.
  // Dependencies on it are added with add_dependent().
  TaskId add(const TaskSpec& spec);
  // `dependent` also waits for `on` (dependencies of submitted tasks, TaskSubmitter).
  void add_dependent(TaskId on, TaskId dependent) { extra_dependents_[on].push_back(dependent); }
  // A task that ended, and whose dependencies ended, will not be asked about again
  // (TaskSubmitter::forget): its entry is released (the memory goes with its block's last) and
  // the list of those that waited for it too. It keeps counting in its final state. After this
  // only forgotten() may be asked about it; for_each_dependent() and cascade() skip it.
  void forget(TaskId id) {
    rt_.release(id);
    if (!extra_dependents_.empty()) extra_dependents_.erase(id);
  }
  bool forgotten(TaskId id) const { return !rt_.held(id); }

  std::size_t size() const { return rt_.size(); }
  TaskRuntime& operator[](TaskId id) { return rt_[id]; }
  const TaskRuntime& operator[](TaskId id) const { return rt_[id]; }
  TaskState state(TaskId id) const { return rt_[id].state; }

  // The one way a task's state changes. Returns false (and records error()) when the state
  // machine forbids the move; the state is then left as it was.
  bool move(TaskId id, TaskState to) {
    TaskRuntime& r = rt_[id];
    if (!is_valid_transition(r.state, to)) [[unlikely]] {
      refuse(id, r.state, to);
      return false;
    }
    auto& in = r.service ? service_in_ : in_;
    --in[static_cast<std::size_t>(r.state)];
    ++in[static_cast<std::size_t>(to)];
    r.state = to;
    return true;
  }

  // Resume: an earlier session of the run finished this pending task (same spec): it starts out
  // succeeded and counts as skipped. Not a move (nothing happened to it in this session).
  void skip_succeeded(TaskId id);
  // Resume: an earlier session dropped this pending task from a quorum round (same spec): it
  // starts out cancelled and dropped. Not a move either.
  void skip_dropped(TaskId id);
  // Marks a task that just moved to cancelled as dropped (counted apart in progress()).
  void mark_dropped(TaskId id) {
    if (!rt_[id].dropped) ++dropped_;
    rt_[id].dropped = true;
  }
  // Whether a task counts as done for those that wait for it: it succeeded, or was dropped.
  bool satisfied(TaskId id) const {
    const TaskRuntime& r = rt_[id];
    return r.state == TaskState::succeeded || (r.state == TaskState::cancelled && r.dropped);
  }

  // The first move the state machine refused, as internal_error naming the task and the move;
  // ok when none was.
  const Status& error() const { return error_; }

  // Calls f(d) for every task d that lists `id` in its `after`: the graph's own edges (CSR),
  // then those of tasks submitted while running. f must not add tasks or dependents.
  template <typename F>
  void for_each_dependent(TaskId id, F&& f) const {
    if (id < base_count_) {
      for (auto i = dep_offsets_[id]; i < dep_offsets_[id + 1]; ++i) f(dep_targets_[i]);
    }
    if (extra_dependents_.empty()) return;
    auto it = extra_dependents_.find(id);
    if (it == extra_dependents_.end()) return;
    for (TaskId d : it->second) {
      if (!forgotten(d)) f(d);
    }
  }

  // The cancel cascade: calls cancel(d) for every pending task downstream of `id`, each once,
  // parents before children. cancel(d) must take d out of pending (cancelled), which is what
  // stops the walk at tasks already handled.
  template <typename F>
  void cascade(TaskId id, F&& cancel) {
    stack_.clear();
    stack_.push_back(id);
    while (!stack_.empty()) {
      TaskId u = stack_.back();
      stack_.pop_back();
      for_each_dependent(u, [&](TaskId d) {
        if (rt_[d].state == TaskState::pending) {
          cancel(d);
          stack_.push_back(d);
        }
      });
    }
  }

  // Counters, always equal to what the states say.
  std::size_t terminal() const {
    std::int64_t n = 0;
    for (TaskState st :
         {TaskState::succeeded, TaskState::failed, TaskState::cancelled, TaskState::timed_out}) {
      n += count(st);
    }
    return static_cast<std::size_t>(n);
  }
  bool all_terminal() const { return terminal() == rt_.size(); }
  std::size_t service_tasks() const { return service_tasks_; }
  // Tasks other than service replicas that are not terminal yet.
  bool work_left() const {
    return in_[static_cast<std::size_t>(TaskState::pending)] +
               in_[static_cast<std::size_t>(TaskState::ready)] +
               in_[static_cast<std::size_t>(TaskState::running)] >
           0;
  }
  // Tasks in state `st`.
  std::int64_t count(TaskState st) const {
    return in_[static_cast<std::size_t>(st)] + service_in_[static_cast<std::size_t>(st)];
  }
  // total, succeeded, failed (or timed out), cancelled, running and skipped; the coordinator
  // fills in the rest.
  Progress progress() const {
    Progress p;
    p.total = static_cast<std::int64_t>(rt_.size());
    p.succeeded = count(TaskState::succeeded);
    p.failed = count(TaskState::failed) + count(TaskState::timed_out);
    p.cancelled = count(TaskState::cancelled);
    p.dropped = dropped_;
    p.running = count(TaskState::running);
    p.skipped = skipped_;
    return p;
  }

 private:
  [[gnu::cold]] void refuse(TaskId id, TaskState from, TaskState to);

  // By id, in blocks of 1024 (57 KB): a served instance gives back its finished runs' entries
  // (forget); an index costs one more load than a vector's.
  IdSlab<TaskRuntime, 1024> rt_;
  std::size_t base_count_ = 0;  // the graph's tasks; ids from here on were submitted
  // Dependents in CSR form: one allocation for the whole graph instead of one vector per task.
  std::vector<std::uint32_t> dep_offsets_;
  std::vector<TaskId> dep_targets_;
  std::unordered_map<TaskId, std::vector<TaskId>> extra_dependents_;
  std::vector<TaskId> stack_;  // cascade()'s
  // Per state (indexed by its value): how many tasks other than service replicas, how many
  // replicas, are in it. Counted apart so work_left() needs no walk.
  std::array<std::int64_t, 7> in_{};
  std::array<std::int64_t, 7> service_in_{};
  std::size_t service_tasks_ = 0;
  std::int64_t skipped_ = 0;
  std::int64_t dropped_ = 0;
  Status error_;
};

}  // namespace chorus
