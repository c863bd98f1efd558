#include "api/served_instance.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "adapters/local/process_identity.hpp"
#include "adapters/local/thread_fs_identity.hpp"
#include "api/run_policies.hpp"
#include "api/run_workflow.hpp"
#include "core/host_name.hpp"
#include "core/id_slab.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/orphans.hpp"
#include "runtime/repeat_driver.hpp"
#include "runtime/served_journal.hpp"
#include "runtime/store/submission_store.hpp"
#include "schedulers/queue/user_cap_queue.hpp"
#include "workflows/workflow_loader.hpp"

namespace chorus {
namespace {

// One run of the instance, from acceptance to its end. Created on the submitting thread, owned
// by the coordinator's thread once taken from the inbox.
struct ServedRun {
  RunInfo info;
  WorkflowGraph graph;
  std::string log_dir;
  std::optional<RunAs> run_as;
  std::vector<gid_t> groups;  // run_as's groups, looked up once (as_owner runs every loop turn)
  std::uint32_t owner = 0;
  std::string owner_name;      // every task's `user`: what fair sharing and limits go by
  std::vector<TaskId> global;  // local id -> the coordinator's id (the graph's, then added ones)
  std::vector<ServiceId> services;  // the run's service id -> the coordinator's
  // Its tasks other than service replicas not ended yet: at 0 nothing can use its services any
  // more (a repeat round is submitted before the task whose end begins it counts as ended), so
  // they are stopped.
  std::int64_t work_left = 0;
  bool services_stopped = false;
  // local id -> the task's name in the run; a deque: the served journal keeps views of them,
  // which must stay valid as the run grows (repeat rounds).
  std::deque<std::string> names;
  // The run's repeat groups, round by round (null without any); holds `graph`, which never moves.
  std::unique_ptr<RepeatDriver> repeats;
  std::int64_t ended = 0;
  bool bad = false;               // a task failed, timed out or was cancelled
  bool cancel_requested = false;  // chorus cancel
  bool finished = false;
};

// A topological order of the graph's tasks (dependencies first): the coordinator takes a
// submitted task's dependencies by id, so they must be submitted before it.
std::vector<TaskId> topological_order(const WorkflowGraph& graph) {
  const std::size_t n = graph.tasks.size();
  std::vector<std::uint32_t> waiting(n, 0);
  std::vector<std::vector<TaskId>> dependents(n);
  for (const TaskSpec& t : graph.tasks) {
    waiting[t.id] = static_cast<std::uint32_t>(t.after.size());
    for (TaskId d : t.after) dependents[d].push_back(t.id);
  }
  std::vector<TaskId> order;
  order.reserve(n);
  for (TaskId id = 0; id < n; ++id) {
    if (waiting[id] == 0) order.push_back(id);
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (TaskId d : dependents[order[i]]) {
      if (--waiting[d] == 0) order.push_back(d);
    }
  }
  return order;  // validate_graph refused cycles, so every task is here
}

// The run's repeat groups get their driver (it keeps a reference to r.graph, which stays put).
void attach_repeats(ServedRun& r, std::vector<std::unique_ptr<QuorumPolicy>> quorums) {
  if (r.graph.repeats.empty()) return;
  r.repeats = std::make_unique<RepeatDriver>(r.graph, std::move(quorums));
}

Status make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  return {};
}

// <state>/serve.token: the instance's token, drawn once, kept across restarts (how a restart
// finds the tasks the killed instance left running).
Result<std::string> instance_token(const std::string& state_dir) {
  const std::string path = state_dir + "/serve.token";
  std::ifstream in(path);
  std::string token;
  if (in >> token && token.size() == 32) return token;
  token = new_run_token();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("cannot write " + path);
  const std::string line = token + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!ok) return io_error("cannot write " + path);
  return token;
}

}  // namespace

class ServedInstance::Impl {
 public:
  ServedInstanceOptions options;
  std::string token;
  std::unique_ptr<ExecutionBackend> own_backend;
  ExecutionBackend* backend = nullptr;
  RunPolicies policies;
  std::unique_ptr<PlacementPolicy> placed;
  std::vector<NodeInfo> nodes;
  Resources largest;

  // The submitting thread's connections.
  std::unique_ptr<StateStore> submit_journal;
  std::unique_ptr<SubmissionStore> submissions;

  // The coordinator's thread.
  std::unique_ptr<StateStore> journal;
  std::unique_ptr<ServedJournal> routed;
  WorkflowGraph empty_graph;
  RunState previous;  // resumed runs' records, under the coordinator's names
  std::vector<std::unique_ptr<ServedRun>> active;
  std::vector<ServedRun*> with_quorums;  // the active runs with quorum rounds (asked each turn)
  // Runs that finished since the last turn, then those that finished before it: released (with
  // what the coordinator and the journal keep of their tasks) one turn later, when a journal
  // write has taken every record of them (a round's last events are written after its
  // handlers, which is where a run finishes).
  std::vector<ServedRun*> finished_now;
  std::vector<ServedRun*> finished_before;
  IdSlab<std::pair<ServedRun*, TaskId>> route;             // by the coordinator's id
  std::unordered_map<std::string_view, ServedRun*> by_id;  // views the run's info.id
  std::unique_ptr<Coordinator> coordinator;
  std::thread thread;
  CancelToken cancel;
  int wake = -1;
  std::atomic<bool> stopping{false};

  // Between the two.
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<ServedRun>> inbox;
  std::vector<std::string> cancels;
  std::unordered_map<std::uint32_t, std::int64_t> outstanding;  // tasks not ended, by owner
  // The fixed ports (tcp/http probes: port + replica) of the services of runs not finished,
  // with the run holding each: a second run's replica would fail its bind while its probe
  // reached the first run's service, so such a run is refused at submission.
  struct PortHolder {
    std::string run_id;
    std::uint32_t owner = 0;
  };
  std::map<int, PortHolder> ports_held;

  ~Impl() {
    if (wake >= 0) ::close(wake);
  }

  void post(std::unique_ptr<ServedRun> run) {
    {
      std::lock_guard lock(mutex);
      inbox.push_back(std::move(run));
    }
    wake_up();
  }
  void wake_up() {
    const std::uint64_t one = 1;
    (void)!::write(wake, &one, sizeof one);
  }

  // ---- The coordinator's thread.

  std::optional<TimePoint> on_turn(TimePoint now, TaskSubmitter& submitter) {
    std::uint64_t drained = 0;
    (void)!::read(wake, &drained, sizeof drained);
    std::vector<std::unique_ptr<ServedRun>> taken;
    std::vector<std::string> to_cancel;
    {
      std::lock_guard lock(mutex);
      taken.swap(inbox);
      to_cancel.swap(cancels);
    }
    if (!finished_before.empty()) release_finished(submitter);
    finished_before.swap(finished_now);
    for (auto& run : taken) {
      ServedRun& r = *run;
      by_id[r.info.id] = &r;
      active.push_back(std::move(run));
      if (r.repeats && r.repeats->has_quorums()) with_quorums.push_back(&r);
      r.global.assign(r.graph.tasks.size(), kNoTask);
      r.names.clear();
      for (const TaskSpec& t : r.graph.tasks) r.names.push_back(t.name);
      for (const ServiceSpec& svc : r.graph.services) {
        auto id = submitter.submit_service(svc);
        r.services.push_back(id.ok() ? *id : kNoService);
        if (!id.ok()) {
          std::fprintf(stderr, "chorus serve: run %s: service '%s' not taken: %s\n",
                       r.info.id.c_str(), svc.name.c_str(), id.status().message().c_str());
        }
      }
      for (TaskId local : topological_order(r.graph)) {
        const TaskSpec& spec = r.graph.tasks[local];
        if (spec.kind != TaskKind::service) ++r.work_left;
        auto id = submit_local(r, local, spec, submitter);
        if (!id.ok()) {
          std::fprintf(stderr, "chorus serve: run %s: task '%s' not taken: %s\n", r.info.id.c_str(),
                       r.names[local].c_str(), id.status().message().c_str());
          r.bad = true;
          if (spec.kind != TaskKind::service) --r.work_left;
          ended_one(r);
        }
      }
      if (r.work_left == 0) stop_services(r, submitter);
      maybe_finish(r);
    }
    for (const std::string& id : to_cancel) {
      auto it = by_id.find(id);
      if (it == by_id.end() || it->second->finished) continue;
      ServedRun& r = *it->second;
      r.cancel_requested = true;
      stop_services(r, submitter);  // their replicas stop (or are cancelled) with the run
      for (TaskId local = 0; local < r.global.size(); ++local) {
        const bool replica =
            local < r.graph.tasks.size() && r.graph.tasks[local].kind == TaskKind::service;
        if (r.global[local] != kNoTask && !replica) {
          (void)submitter.cancel(r.global[local], "run cancelled (chorus cancel)");
        }
      }
    }
    std::optional<TimePoint> next = backend->on_turn(policies.queue->size(), now);
    // Quorum rounds of the runs' repeat groups: begun, and closed at their deadlines.
    std::size_t kept = 0;
    for (ServedRun* run : with_quorums) {
      if (run->finished) continue;
      with_quorums[kept++] = run;
      RunView view(*this, *run, submitter);
      std::optional<TimePoint> due;
      as_owner(*run, [&] { due = run->repeats->on_turn(now, view); });
      if (due && (!next || *due < *next)) next = due;
    }
    with_quorums.resize(kept);
    // Finished runs are let go within two turns (a journal write between): come round soon.
    if (!finished_before.empty() || !finished_now.empty()) next = now;
    return next;
  }

  // Submits task `local` of run `r` (`spec`: the run's own ids and name, `r.names[local]` set)
  // under the coordinator's: its name prefixed with the run's id, its user the submitter, its
  // dependencies translated. Returns the coordinator's id.
  Result<TaskId> submit_local(ServedRun& r, TaskId local, TaskSpec s, TaskSubmitter& submitter) {
    s.name = r.info.id + "/" + r.names[local];
    s.user = r.owner_name;  // the instance's users share, not the workflows' names
    if (!s.job.empty()) s.job = r.info.id + "/" + s.job;
    if (s.workdir.empty()) s.workdir = r.graph.workdir;
    for (TaskId& d : s.after) {
      if (d >= r.global.size() || r.global[d] == kNoTask)
        return invalid_argument("a dependency of it was not taken");
      d = r.global[d];
    }
    auto global_service = [&r](ServiceId& u) {
      if (u >= r.services.size() || r.services[u] == kNoService) return false;
      u = r.services[u];
      return true;
    };
    for (ServiceId& u : s.uses) {
      if (!global_service(u)) return invalid_argument("a service it uses was not taken");
    }
    if (s.kind == TaskKind::service && !global_service(s.service)) {
      return invalid_argument("its service was not taken");
    }
    // Routed before it is submitted: submit() may already journal its end (a dependency that
    // failed in an earlier session) or count it as done.
    const auto next = static_cast<TaskId>(route.size());
    route.push_back({&r, local});
    routed->add_route(next, r.info.id, local, r.names[local]);
    auto id = submitter.submit(std::move(s));
    if (!id.ok() || *id != next) {
      route.pop_back();
      return id.ok() ? internal_error("id out of step") : id.status();
    }
    r.global[local] = *id;
    return *id;
  }

  // What a run's repeat groups (RepeatDriver) see of the coordinator: the run's own task ids
  // and names; a submitted task is the run's next id.
  class RunView final : public TaskSubmitter {
   public:
    RunView(Impl& m, ServedRun& r, TaskSubmitter& inner) : m_(m), r_(r), inner_(inner) {}
    Result<TaskId> submit(TaskSpec spec) override {
      if (spec.kind == TaskKind::service) {
        return invalid_argument("a run's service replicas are submitted with the run");
      }
      const auto local = static_cast<TaskId>(r_.global.size());
      r_.global.push_back(kNoTask);
      r_.names.push_back(spec.name);
      {
        std::lock_guard lock(m_.mutex);
        ++m_.outstanding[r_.owner];
      }
      ++r_.work_left;
      auto id = m_.submit_local(r_, local, std::move(spec), inner_);
      if (!id.ok()) {
        r_.global.pop_back();
        r_.names.pop_back();
        --r_.work_left;
        std::lock_guard lock(m_.mutex);
        --m_.outstanding[r_.owner];
        return id.status();
      }
      return local;
    }
    Result<ServiceId> submit_service(ServiceSpec /*service*/) override {
      return invalid_argument("a run's services are submitted with the run");
    }
    Status stop_service(ServiceId /*service*/) override {
      return invalid_argument("a run's services stop when its other tasks have ended");
    }
    Status forget(TaskId /*task*/) override {
      return invalid_argument("a run's tasks are forgotten with the run");
    }
    Status release(TaskId t) override {
      auto g = global(t);
      return g.ok() ? inner_.release(*g) : g.status();
    }
    Status add_dependency(TaskId task, TaskId on) override {
      auto a = global(task);
      auto b = global(on);
      if (!a.ok()) return a.status();
      if (!b.ok()) return b.status();
      return inner_.add_dependency(*a, *b);
    }
    Status fail_unstarted(TaskId t, const std::string& why) override {
      auto g = global(t);
      return g.ok() ? inner_.fail_unstarted(*g, why) : g.status();
    }
    Status drop(TaskId t, const std::string& why) override {
      auto g = global(t);
      return g.ok() ? inner_.drop(*g, why) : g.status();
    }
    Status cancel(TaskId t, const std::string& why) override {
      auto g = global(t);
      return g.ok() ? inner_.cancel(*g, why) : g.status();
    }
    bool dropped(TaskId t) const override {
      auto g = global(t);
      return g.ok() && inner_.dropped(*g);
    }
    TimePoint now() override { return inner_.now(); }
    std::string_view task_name(TaskId t) const override {
      return t < r_.names.size() ? std::string_view(r_.names[t]) : std::string_view();
    }

   private:
    Result<TaskId> global(TaskId local) const {
      if (local >= r_.global.size() || r_.global[local] == kNoTask)
        return invalid_argument("unknown task id " + std::to_string(local) + " of run " +
                                r_.info.id);
      return r_.global[local];
    }
    Impl& m_;
    ServedRun& r_;
    TaskSubmitter& inner_;
  };

  void on_task_done(const TaskSpec& spec, TaskState outcome, TaskSubmitter& submitter) {
    if (spec.id >= route.size() || !route.held(spec.id)) return;
    const auto [run, local] = route[spec.id];
    ServedRun& r = *run;
    ended_one(r);
    const bool replica = spec.kind == TaskKind::service;
    // A replica not started when its service was stopped is cancelled: not a failure.
    const bool unneeded = replica && r.services_stopped && outcome == TaskState::cancelled;
    if (outcome != TaskState::succeeded && !submitter.dropped(spec.id) && !unneeded) r.bad = true;
    if (r.repeats) {
      // The driver knows the run's own ids (it may submit the next round).
      TaskSpec mine = spec;
      mine.id = local;
      mine.name = r.names[local];
      RunView view(*this, r, submitter);
      as_owner(r, [&] { r.repeats->on_task_done(mine, outcome, view); });
    }
    if (!replica && --r.work_left == 0) stop_services(r, submitter);
    maybe_finish(r);
  }

  // Runs `f` (a repeat driver's turn: it writes quorum records and reads `until:` files in the
  // run's folders) with this thread reaching files as the run's submitter, never as root: a
  // user's folder may hold symlinks to anywhere. Not run (the run is cancelled) if the thread
  // cannot switch.
  template <class F>
  void as_owner(ServedRun& r, F&& f) {
    if (!r.run_as) {
      f();
      return;
    }
    ThreadFsIdentity as(r.run_as->uid, r.run_as->gid, r.groups);
    if (as.ok()) {
      f();
      return;
    }
    std::fprintf(stderr,
                 "chorus serve: run %s: cannot act as uid %u in its folders; cancelling it\n",
                 r.info.id.c_str(), r.run_as->uid);
    {
      std::lock_guard lock(mutex);
      cancels.push_back(r.info.id);
    }
    wake_up();
  }

  // Nothing of run `r` can use its services any more (its other tasks ended, or it is
  // cancelled): they stop.
  static void stop_services(ServedRun& r, TaskSubmitter& submitter) {
    if (r.services_stopped) return;
    r.services_stopped = true;
    for (ServiceId s : r.services) {
      if (s != kNoService) (void)submitter.stop_service(s);
    }
  }

  void ended_one(ServedRun& r) {
    ++r.ended;
    std::lock_guard lock(mutex);
    --outstanding[r.owner];
  }

  // Ends the run in the journal once each of its tasks has ended (never while the instance
  // stops: the tasks it stops then run again when it restarts).
  void maybe_finish(ServedRun& r) {
    if (r.finished || stopping.load() || r.ended < static_cast<std::int64_t>(r.global.size())) {
      return;
    }
    r.finished = true;
    r.info.total_tasks = static_cast<std::int64_t>(r.global.size());  // repeat rounds added
    r.info.status = r.cancel_requested ? RunStatus::cancelled
                    : r.bad            ? RunStatus::failed
                                       : RunStatus::succeeded;
    r.info.updated = wall_seconds_now();
    r.info.coordinator_pid = 0;
    r.info.coordinator_start = 0;
    if (Status s = journal->update_run(r.info); !s.ok()) {
      std::fprintf(stderr, "chorus serve: run %s: %s\n", r.info.id.c_str(), s.message().c_str());
    }
    (void)journal->forget_task_groups(r.info.id);
    if (!r.graph.services.empty()) free_ports(r.info.id);  // its replicas have all ended
    finished_now.push_back(&r);
  }

  // Gives back what the instance, its journal and its coordinator keep of the runs that
  // finished before the last turn: a long-lived instance holds the runs that go on, not every
  // task it ever ran. The runs' records stay in the journal (chorus status, logs, report).
  void release_finished(TaskSubmitter& submitter) {
    std::unordered_set<const ServedRun*> gone(finished_before.begin(), finished_before.end());
    for (ServedRun* run : finished_before) {
      ServedRun& r = *run;
      for (TaskId local = 0; local < r.global.size(); ++local) {
        const TaskId g = r.global[local];
        if (g == kNoTask) continue;
        const bool replica =
            local < r.graph.tasks.size() && r.graph.tasks[local].kind == TaskKind::service;
        if (!replica) {  // a replica's spec stays with its service in the coordinator
          if (Status s = submitter.forget(g); !s.ok()) {
            std::fprintf(stderr, "chorus serve: run %s: %s\n", r.info.id.c_str(),
                         s.message().c_str());
          }
        }
        routed->forget_route(g);
        route.release(g);
      }
      by_id.erase(r.info.id);
    }
    std::erase_if(with_quorums, [&](const ServedRun* r) { return gone.count(r) != 0; });
    std::erase_if(active, [&](const auto& r) { return gone.count(r.get()) != 0; });
    finished_before.clear();
  }

  TaskHome home_of(const TaskSpec& spec) const {
    const auto& [run, local] = route[spec.id];
    return TaskHome{run->info.id, run->log_dir, run->names[local],
                    run->run_as ? &*run->run_as : nullptr};
  }

  // ---- Accepting.

  Result<WorkflowGraph> load(const std::string& text, const std::string& path,
                             const std::string& cwd) const {
    WorkflowLoadOptions lo;
    lo.base_dir = cwd;
    lo.largest_node = largest;
    lo.machine_phrase = "this instance's nodes";
    auto graph = parse_workflow_text(text, path, lo);
    if (!graph.ok()) return graph.status();
    if (graph->tasks.empty()) return invalid_argument(path + ": the workflow has no tasks");
    if (Status s = validate_graph(*graph); !s.ok()) return s;
    return graph;
  }

  RunInfo fresh_info(const WorkflowGraph& graph) const {
    RunInfo info;
    info.workflow_name = graph.name;
    info.workflow_path = graph.source_path;
    info.workdir = graph.workdir;
    info.status = RunStatus::running;
    info.created = info.updated = wall_seconds_now();
    info.total_tasks = static_cast<std::int64_t>(graph.tasks.size());
    mark_ours(info);
    info.nodes = nodes;
    return info;
  }

  void mark_ours(RunInfo& info) const {
    info.coordinator_pid = getpid();
    info.coordinator_start = process_start_ticks(getpid()).value_or(0);
    info.boot_id = boot_id();
    info.host = host_name();
    info.token = token;
  }

  std::optional<RunAs> run_as_of(const Submitter& who) const {
    if (::geteuid() != 0 || who.uid == 0) return std::nullopt;
    return RunAs{who.uid, who.gid, who.name, who.home};
  }

  // The accepted runs that had not ended: into the inbox, with their records for the
  // coordinator's resume; their orphans killed first.
  Status resume_accepted() {
    // The journal's running runs only, each looked up by its id in serve.db: a restart costs
    // what is to resume, not every submission the instance ever took (texts included).
    auto listed = journal->list_runs();  // oldest first
    if (!listed.ok()) return listed.status();
    for (RunInfo& running : *listed) {
      if (running.status != RunStatus::running) continue;
      auto found = submissions->find_by_run(running.id);
      if (!found.ok()) return found.status();
      if (!found->has_value()) {
        // A run of this instance created but never acknowledged (killed in between).
        if (running.token == token) {
          running.status = RunStatus::failed;
          running.coordinator_pid = 0;
          running.updated = wall_seconds_now();
          (void)journal->update_run(running);
        }
        continue;
      }
      const Submission& s = **found;
      std::optional<RunInfo> info = std::move(running);
      auto graph = load(s.workflow_text, s.workflow_path, s.cwd);
      auto state = journal->replay(info->id);
      auto quorums = graph.ok()
                         ? make_quorum_policies(*graph, nullptr)
                         : Result<std::vector<std::unique_ptr<QuorumPolicy>>>(graph.status());
      if (!quorums.ok() || !state.ok()) {
        info->status = RunStatus::failed;
        info->updated = wall_seconds_now();
        info->coordinator_pid = 0;
        (void)journal->update_run(*info);
        std::fprintf(stderr, "chorus serve: run %s cannot be resumed: %s\n", info->id.c_str(),
                     (quorums.ok() ? state.status() : quorums.status()).message().c_str());
        continue;
      }
      auto groups = journal->task_groups(info->id);
      if (groups.ok()) kill_orphans_of_run(*info, *groups, *state);
      (void)journal->forget_task_groups(info->id);
      auto run = std::make_unique<ServedRun>();
      run->info = *info;
      mark_ours(run->info);
      run->info.updated = wall_seconds_now();
      if (Status u = journal->update_run(run->info); !u.ok()) return u;
      run->graph = std::move(*graph);
      attach_repeats(*run, std::move(*quorums));
      run->log_dir = run_log_dir(options.state_dir, run->info.id);
      Submitter who{s.uid, 0, s.user, {}};
      if (s.uid != 0 && ::geteuid() == 0) who = lookup(s.uid, s.user);
      run->run_as = run_as_of(who);
      if (run->run_as) run->groups = ThreadFsIdentity::groups_of(who.name, run->run_as->gid);
      run->owner = s.uid;
      run->owner_name = who.name;
      for (TaskRecord rec : state->tasks) {
        rec.name = run->info.id + "/" + rec.name;
        previous.tasks.push_back(std::move(rec));
      }
      hold_ports(run->info.id, s.uid, run->graph);
      std::lock_guard lock(mutex);
      outstanding[s.uid] += static_cast<std::int64_t>(run->graph.tasks.size());
      inbox.push_back(std::move(run));
    }
    return {};
  }

  static Submitter lookup(std::uint32_t uid, const std::string& fallback_name);

  // The config's weights, expanded to users, as the queue policy's `weights` option.
  Status apply_weights() {
    const ServeConfig& c = options.access.config();
    if (c.user_weights.empty() && c.group_weights.empty()) return {};
    OptionEntry weights;
    weights.key = "weights";
    weights.key_at = c.weights_at;
    weights.value.kind = OptionValue::Kind::map;
    weights.value.at = c.weights_at;
    for (const auto& [user, w] : options.access.user_weights()) {
      OptionEntry e;
      e.key = user;
      e.key_at = c.weights_at;
      e.value.text = std::to_string(w);
      e.value.at = c.weights_at;
      weights.value.items.push_back(std::move(e));
    }
    if (weights.value.items.empty()) return {};  // groups without members here
    empty_graph.scheduler.options.set(std::move(weights));
    return {};
  }

  // The config's running_cores limits, around the queue policy.
  void cap_running_cores() {
    const ServeConfig& c = options.access.config();
    bool any = c.default_limits.running_cores.has_value();
    for (const auto& [name, l] : c.user_limits) any = any || l.running_cores.has_value();
    for (const auto& [name, l] : c.group_limits) any = any || l.running_cores.has_value();
    if (!any) return;
    policies.queue =
        std::make_unique<UserCapQueue>(std::move(policies.queue), [this](const std::string& user) {
          passwd pw{};
          passwd* found = nullptr;
          std::vector<char> buf(16384);
          const std::uint32_t gid =
              getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found
                  ? pw.pw_gid
                  : 0;
          return options.access.limits_of(user, gid).running_cores;
        });
  }

  // With pilot jobs, a task whose timeout outlasts a pilot's walltime could never be placed; an
  // MPI task would run as mpirun on the instance's own machine (the pilots hold agents, not an
  // MPI launcher of their own yet), so it is refused rather than run where nobody asked.
  Status check_for_pilots(const WorkflowGraph& graph) const {
    const auto& alloc = options.access.config().slurm_allocation;
    if (!alloc) return {};
    for (const TaskSpec& t : graph.tasks) {
      if (t.kind == TaskKind::mpi) {
        return invalid_argument(
            "refused: task '" + t.name + "' is an MPI task, and this instance runs its work on " +
            "pilot jobs (allocation: slurm, " + alloc->at.format() +
            "), which take executable and function tasks only: run it with chorus run/launch "
            "in an allocation, or through an instance started inside one (sbatch ... chorus "
            "serve)");
      }
      if (t.timeout <= alloc->walltime) continue;
      return invalid_argument("refused: task '" + t.name + "' has a timeout of " +
                              format_duration(t.timeout) + " but this instance's pilot jobs live " +
                              format_duration(alloc->walltime) + " (allocation: slurm: walltime, " +
                              alloc->at.format() +
                              "): lower the timeout, or ask for longer pilots");
    }
    return {};
  }

  // "FILE:LINE:COL: " of a place in the workflow file, or "" for one not from a file.
  static std::string located(const WorkflowGraph& graph, int line, int column) {
    if (line <= 0) return {};
    return graph.source_path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  }

  // Every folder the run's tasks would start in must be one the submitter can enter (checked as
  // the submitter when the instance is root): refused at once, not one launch failure per task.
  Status check_workdirs(const Submitter& who, const WorkflowGraph& graph) const {
    std::unordered_set<std::string_view> seen;
    std::optional<ThreadFsIdentity> as;
    if (::geteuid() == 0 && who.uid != 0) {
      as.emplace(who.uid, who.gid, ThreadFsIdentity::groups_of(who.name, who.gid));
      if (!as->ok()) {
        return internal_error("cannot check the run's folders as " + who.name);
      }
    }
    for (const TaskSpec& t : graph.tasks) {
      const std::string& dir = t.workdir.empty() ? graph.workdir : t.workdir;
      if (!seen.insert(dir).second) continue;
      // "dir/." resolves only through a folder one may search (access(2) would check the real
      // uid, not the thread's fs uid).
      const int fd = ::open((dir + "/.").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
        continue;
      }
      const std::string why = std::strerror(errno);
      return invalid_argument(located(graph, t.pos.line, t.pos.column) + "refused: task '" +
                              t.name + "' would start in " + dir + ", which " + who.name +
                              " cannot enter (" + why + ")" +
                              (t.workdir.empty() ? "; that is the folder chorus submit ran in"
                                                 : "; that is its workdir"));
    }
    return {};
  }

  // The ports a graph's services listen on, by the probes' rule (replica r on port + r).
  template <class F>
  static void for_each_fixed_port(const WorkflowGraph& graph, F&& f) {
    for (const ServiceSpec& svc : graph.services) {
      const bool fixed = svc.ready.kind == ProbeKind::tcp || svc.ready.kind == ProbeKind::http;
      if (!fixed || svc.ready.port <= 0) continue;
      for (int r = 0; r < svc.replicas; ++r) f(svc, svc.ready.port + r);
    }
  }

  Status check_ports(const Submitter& who, const WorkflowGraph& graph) const {
    std::lock_guard lock(mutex);
    Status refused;
    for_each_fixed_port(graph, [&](const ServiceSpec& svc, int port) {
      auto it = ports_held.find(port);
      if (!refused.ok() || it == ports_held.end()) return;
      const bool theirs = it->second.owner == who.uid;
      refused = Status(ErrorCode::unavailable,
                       located(graph, svc.line, svc.column) + "refused: service '" + svc.name +
                           "' listens on port " + std::to_string(port) + ", which a service of " +
                           (theirs ? "your run " + it->second.run_id : std::string("another run")) +
                           " in this instance holds: give it another port, or let it bind port "
                           "0 and announce its endpoint (a stdout or file probe), or submit again "
                           "once that run has ended");
    });
    return refused;
  }

  void hold_ports(const std::string& run_id, std::uint32_t owner, const WorkflowGraph& graph) {
    std::lock_guard lock(mutex);
    for_each_fixed_port(graph, [&](const ServiceSpec&, int port) {
      ports_held[port] = {run_id, owner};
    });
  }

  void free_ports(const std::string& run_id) {
    std::lock_guard lock(mutex);
    std::erase_if(ports_held, [&](const auto& held) { return held.second.run_id == run_id; });
  }

  // A refusal when the submission would pass one of the submitter's limits.
  Status check_limits(const Submitter& who, const WorkflowGraph& graph) const {
    if (who.uid == 0) return {};
    const ServeLimits l = options.access.limits_of(who.name, who.gid);
    const auto n = static_cast<std::int64_t>(graph.tasks.size());
    if (l.queued_tasks) {
      std::int64_t now = 0;
      {
        std::lock_guard lock(mutex);
        auto it = outstanding.find(who.uid);
        if (it != outstanding.end()) now = it->second;
      }
      if (now + n > *l.queued_tasks) {
        return Status(ErrorCode::unavailable,
                      "refused: " + who.name + " has " + std::to_string(now) +
                          " tasks queued or running in this instance and this workflow adds " +
                          std::to_string(n) + ", past the limit of " +
                          std::to_string(*l.queued_tasks) + " (queued_tasks, " +
                          l.queued_tasks_at.format() +
                          "); submit again when some have finished, or split the workflow");
      }
    }
    if (l.running_cores) {
      for (const TaskSpec& t : graph.tasks) {
        if (t.total().cores <= *l.running_cores) continue;
        return Status(ErrorCode::unsatisfiable,
                      "refused: task '" + t.name + "' asks for " + std::to_string(t.total().cores) +
                          " cores but " + who.name + "'s tasks may hold at most " +
                          std::to_string(*l.running_cores) + " at once (running_cores, " +
                          l.running_cores_at.format() + ")");
      }
    }
    return {};
  }
};

}  // namespace chorus

namespace chorus {

Submitter ServedInstance::Impl::lookup(std::uint32_t uid, const std::string& fallback_name) {
  Submitter who{uid, uid, fallback_name, "/"};
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    who.gid = pw.pw_gid;
    who.name = pw.pw_name;
    who.home = pw.pw_dir;
  }
  return who;
}

Submitter submitter_of(std::uint32_t uid) {
  return ServedInstance::Impl::lookup(uid, std::to_string(uid));
}

ServedInstance::ServedInstance(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ServedInstance::~ServedInstance() {
  stop();
}

Result<std::unique_ptr<ServedInstance>> ServedInstance::start(
    const ServedInstanceOptions& options) {
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  m.options = options;
  if (Status s = make_dir(options.state_dir); !s.ok()) return s;
  auto token = instance_token(options.state_dir);
  if (!token.ok()) return token.status();
  m.token = *token;

  m.backend = options.backend;
  if (m.backend == nullptr) {
    LocalBackendOptions lo;
    if (options.cores > 0) {
      NodeInfo machine = local_node_info();
      machine.capacity.cores = options.cores;
      lo.nodes = {machine};
    }
    m.own_backend = make_local_backend(std::move(lo));
    m.backend = m.own_backend.get();
  }
  m.nodes = m.backend->nodes();
  for (const NodeInfo& n : m.nodes) {
    m.largest.cores = std::max(m.largest.cores, n.capacity.cores);
    m.largest.memory_mb = std::max(m.largest.memory_mb, n.capacity.memory_mb);
    m.largest.gpus = std::max(m.largest.gpus, n.capacity.gpus);
  }
  RunOptions ro;
  ro.queue = options.queue;
  ro.placement = options.placement;
  m.empty_graph.name = "serve";
  // serve.yaml's policy_options, then its weights: the policies check both as they are built.
  m.empty_graph.scheduler.options = options.access.config().policy_options;
  if (Status s = m.apply_weights(); !s.ok()) return s;
  auto policies = make_run_policies(m.empty_graph, ro);
  if (!policies.ok()) return invalid_argument(policies.status().message());
  m.policies = std::move(*policies);
  m.cap_running_cores();
  m.placed = m.backend->wrap_placement(std::move(m.policies.placement));

  const std::string db = journal_path(options.state_dir);
  auto journal = open_sqlite_store(db);
  if (!journal.ok()) return journal.status();
  m.journal = std::move(*journal);
  if (Status s = m.journal->check_integrity(); !s.ok()) return s;
  auto submit_journal = open_sqlite_store(db);
  if (!submit_journal.ok()) return submit_journal.status();
  m.submit_journal = std::move(*submit_journal);
  auto submissions = SubmissionStore::open(options.state_dir + "/serve.db");
  if (!submissions.ok()) return submissions.status();
  m.submissions = std::move(*submissions);
  m.routed = std::make_unique<ServedJournal>(*m.journal);

  m.wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (m.wake < 0) return io_error("eventfd failed");
  if (Status s = m.resume_accepted(); !s.ok()) return s;

  CoordinatorOptions copts;
  copts.log_dir = options.state_dir + "/runs";
  copts.run_token = m.token;
  copts.open_ended = true;
  copts.wake_fd = m.wake;
  copts.on_turn = [&m](TimePoint now, TaskSubmitter& submitter) {
    return m.on_turn(now, submitter);
  };
  // On agents, a node that goes away (a pilot job ending, an allocation's node failing) loses
  // its tasks: they run again elsewhere without using their retries.
  copts.lost_requeues = m.backend->lost_requeues();
  copts.on_task_done = [&m](const TaskSpec& spec, TaskState outcome, TaskSubmitter& submitter) {
    m.on_task_done(spec, outcome, submitter);
  };
  copts.home_of = [&m](const TaskSpec& spec) { return m.home_of(spec); };
  m.coordinator =
      std::make_unique<Coordinator>(m.empty_graph, *m.routed, "serve", m.nodes, *m.policies.queue,
                                    *m.placed, m.backend->launchers(), copts, &m.cancel);
  m.thread = std::thread([&m] {
    auto ended = m.coordinator->run(&m.previous);
    if (!ended.ok()) {
      std::fprintf(stderr, "chorus serve: the coordinator stopped: %s\n",
                   ended.status().message().c_str());
    }
  });
  return std::unique_ptr<ServedInstance>(new ServedInstance(std::move(impl)));
}

Result<Accepted> ServedInstance::submit(const SubmitRequest& request) {
  Impl& m = *impl_;
  if (m.stopping.load()) return Status(ErrorCode::cancelled, "the instance is stopping");
  if (::geteuid() != 0 && request.who.uid != ::geteuid()) {
    return invalid_argument(
        "this instance runs as uid " + std::to_string(::geteuid()) +
        " and accepts that user's submissions only (run chorus serve as root to serve several "
        "users: each run's tasks then run as their submitter)");
  }
  if (m.options.backend != nullptr && request.who.uid != ::geteuid()) {
    // Agents and Pods run tasks as the instance's user; nobody else's work may run as it.
    return invalid_argument(
        "this instance runs its tasks on " + std::string(m.options.backend->name()) + " as uid " +
        std::to_string(::geteuid()) + ", and accepts that user's submissions only");
  }
  const std::string key = request.key.empty() ? new_run_token() : request.key;
  if (auto seen = m.submissions->find(request.who.uid, key); !seen.ok()) {
    return seen.status();
  } else if (seen->has_value()) {
    return Accepted{(*seen)->run_id, true};
  }
  auto graph = m.load(request.workflow_text, request.workflow_path, request.cwd);
  if (!graph.ok()) return graph.status();
  if (Status s = m.check_limits(request.who, *graph); !s.ok()) return s;
  if (Status s = m.check_for_pilots(*graph); !s.ok()) return s;
  if (Status s = m.check_workdirs(request.who, *graph); !s.ok()) return s;
  if (Status s = m.check_ports(request.who, *graph); !s.ok()) return s;
  auto quorums = make_quorum_policies(*graph, nullptr);
  if (!quorums.ok()) return quorums.status();
  auto run = std::make_unique<ServedRun>();
  auto created = m.submit_journal->create_run(m.fresh_info(*graph));
  if (!created.ok()) return created.status();
  run->info = *created;
  run->graph = std::move(*graph);
  attach_repeats(*run, std::move(*quorums));
  run->log_dir = run_log_dir(m.options.state_dir, run->info.id);
  if (Status s = make_dir(run->log_dir); !s.ok()) return s;
  run->run_as = m.run_as_of(request.who);
  if (run->run_as) run->groups = ThreadFsIdentity::groups_of(run->run_as->name, run->run_as->gid);
  run->owner = request.who.uid;
  run->owner_name = request.who.name;
  Submission sub{request.who.uid,       request.who.name,      key,         run->info.id,
                 request.workflow_path, request.workflow_text, request.cwd, wall_seconds_now()};
  if (Status s = m.submissions->add(sub); !s.ok()) {
    // A racing retry of the same key won: this run was never acknowledged.
    run->info.status = RunStatus::failed;
    run->info.coordinator_pid = 0;
    (void)m.submit_journal->update_run(run->info);
    if (auto seen = m.submissions->find(request.who.uid, key); seen.ok() && seen->has_value()) {
      return Accepted{(*seen)->run_id, true};
    }
    return s;
  }
  m.hold_ports(run->info.id, request.who.uid, run->graph);
  {
    std::lock_guard lock(m.mutex);
    m.outstanding[request.who.uid] += static_cast<std::int64_t>(run->graph.tasks.size());
  }
  Accepted accepted{run->info.id, false};
  m.post(std::move(run));
  return accepted;
}

Status ServedInstance::cancel(const std::string& run_id) {
  Impl& m = *impl_;
  if (!owner_of(run_id)) return not_found("no run " + run_id + " here");
  {
    std::lock_guard lock(m.mutex);
    m.cancels.push_back(run_id);
  }
  m.wake_up();
  return {};
}

// Both read <state>/serve.db (the submitting thread's connection), not a list in memory: a
// long-lived instance's runs are without end.
std::optional<std::uint32_t> ServedInstance::owner_of(const std::string& run_id) const {
  auto owner = impl_->submissions->owner_of(run_id);
  if (owner.ok()) return *owner;
  std::fprintf(stderr, "chorus serve: %s\n", owner.status().message().c_str());
  return std::nullopt;
}

std::vector<std::pair<std::string, std::uint32_t>> ServedInstance::runs() const {
  auto all = impl_->submissions->owners();
  if (all.ok()) return std::move(*all);
  std::fprintf(stderr, "chorus serve: %s\n", all.status().message().c_str());
  return {};
}

void ServedInstance::stop() {
  Impl& m = *impl_;
  if (m.stopping.exchange(true)) return;
  m.cancel.request();
  if (m.thread.joinable()) m.thread.join();
}

const std::string& ServedInstance::token() const {
  return impl_->token;
}

std::int64_t ServedInstance::outstanding_tasks(std::uint32_t uid) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->outstanding.find(uid);
  return it == impl_->outstanding.end() ? 0 : it->second;
}

const ServeAccess& ServedInstance::access() const {
  return impl_->options.access;
}

}  // namespace chorus
