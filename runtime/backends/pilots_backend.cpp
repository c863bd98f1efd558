#include "runtime/backends/pilots_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "adapters/inproc/inproc_launcher.hpp"
#include "adapters/mpi/mpi_launcher.hpp"
#include "adapters/slurm/slurm_client.hpp"
#include "core/file_tail.hpp"
#include "core/self_executable.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/agent/live_node_placement.hpp"
#include "runtime/backends/agent_facts.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/backends/node_bound_launcher.hpp"
#include "runtime/backends/slurm_backend.hpp"

namespace chorus {
namespace {

std::string slot_name(int job, int node) {
  return "pilot" + std::to_string(job) + "-" + std::to_string(node);
}

// What the pilot thread and the coordinator's thread share about one pilot (slot group).
struct PilotShared {
  std::atomic<std::int64_t> end_time{0};  // wall seconds its job ends by its limit; 0 = unknown
  std::atomic<bool> draining{false};      // being released: placement leaves it alone
  std::atomic<int> running{0};            // tasks its agents hold (from the coordinator's turn)
  std::atomic<bool> alive{false};         // one of its agents is registered and live
};

class PilotsBackend final : public ExecutionBackend {
 public:
  explicit PilotsBackend(PilotsBackendOptions o)
      : o_(std::move(o)),
        pilots_(std::make_unique<PilotShared[]>(static_cast<std::size_t>(o_.max_jobs))),
        functions_(function_pool_threads(o_.function_threads)),
        mpi_(std::make_unique<MpiLauncher>(std::make_unique<MpirunCommand>(),
                                           LocalLauncherOptions{o_.kill_grace})) {
    for (int j = 0; j < o_.max_jobs; ++j) {
      for (int k = 0; k < o_.nodes; ++k) {
        NodeInfo n;
        n.name = slot_name(j, k);
        n.capacity.cores = o_.cores_per_node;
        nodes_.push_back(n);
      }
    }
  }
  ~PilotsBackend() override { stop(); }

  std::string_view name() const override { return "slurm pilots"; }

  Status start(const BackendStart& how) override {
    if (launcher_ != nullptr) return {};
    std::error_code ec;
    const std::string state =
        std::filesystem::absolute(how.state_dir.empty() ? ".chorus" : how.state_dir, ec).string();
    AgentLauncherOptions ao;
    ao.listen = o_.listen.empty() ? "tcp://" + allocation_interface({}) + ":*" : o_.listen;
    ao.key_dir = state + "/agents/" + std::to_string(::getpid());
    for (const NodeInfo& n : nodes_) ao.agent_nodes.push_back(n.name);
    ao.lost_after = o_.agent_timeout;
    ao.agent_silence = o_.agent_timeout;
    ao.heartbeat = std::min<Duration>(std::chrono::seconds(1), o_.agent_timeout / 4);
    ao.kill_grace = o_.kill_grace;
    // Every pilot gone is the normal idle state here, not the end of the run.
    ao.on_all_lost = [](const std::string&) {};
    auto launcher = AgentLauncher::start(ao);
    if (!launcher.ok()) {
      return Status(launcher.status().code(),
                    "cannot start the agents' endpoint: " + launcher.status().message());
    }
    launcher_ = std::move(*launcher);
    work_dir_ = state + "/pilots";
    std::filesystem::create_directories(work_dir_, ec);
    facts_ = std::make_unique<AgentFacts>(*launcher_, nodes_);
    bound_mpi_ = bound_to_agents(*mpi_, *launcher_);
    stopping_ = false;
    thread_ = std::thread([this] { pilot_loop(); });
    return {};
  }

  void stop() override {
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      wake_.notify_all();
      thread_.join();  // cancels every pilot on its way out
    }
    facts_.reset();
    bound_mpi_.reset();
    launcher_.reset();  // tells the agents to exit
  }

  LauncherTable launchers() override {
    if (launcher_ == nullptr) return LauncherTable{};
    return launcher_table(*launcher_, functions_, *bound_mpi_);
  }
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const override {
    return usable_nodes_only(std::move(policy),
                             [this](const TaskSpec& t, const NodeView& n) { return usable(t, n); });
  }
  NodeFactsSource* facts_source() override { return facts_.get(); }
  // A pilot that ends under a task is the site's doing: see pilots_backend.hpp.
  std::uint32_t lost_requeues() const override { return kAgentsLostRequeues; }

  std::optional<TimePoint> on_turn(std::size_t queued, TimePoint now) override {
    const std::size_t before = queued_.exchange(queued, std::memory_order_relaxed);
    if (before == 0 && queued > 0) {
      // Work arrived: the pilot thread looks now rather than at its next round (one wake-up
      // per idle-to-busy change, not per turn). Not under the thread's mutex: a wake that races
      // its predicate check is lost, and the round's timeout catches it.
      kick_.store(true);
      wake_.notify_one();
    }
    if (launcher_ != nullptr && now >= next_count_) {
      // Each pilot's running tasks and liveness, at most every 200 ms (agents() copies).
      next_count_ = now + std::chrono::milliseconds(200);
      std::vector<int> running(static_cast<std::size_t>(o_.max_jobs), 0);
      std::vector<bool> alive(static_cast<std::size_t>(o_.max_jobs), false);
      for (const AgentInfo& a : launcher_->agents()) {
        const int j = pilot_of(a.node.name);
        if (j < 0 || !a.alive) continue;
        alive[static_cast<std::size_t>(j)] = true;
        running[static_cast<std::size_t>(j)] += static_cast<int>(a.running);
      }
      for (int j = 0; j < o_.max_jobs; ++j) {
        pilots_[j].running.store(running[static_cast<std::size_t>(j)], std::memory_order_relaxed);
        pilots_[j].alive.store(alive[static_cast<std::size_t>(j)], std::memory_order_relaxed);
      }
    }
    // Turns keep coming while pilots exist, so their idleness is seen.
    return now + std::chrono::milliseconds(500);
  }

 private:
  // The pilot thread's view of one slot group.
  struct Pilot {
    std::uint32_t job = 0;  // 0: none
    SlurmJobState state = SlurmJobState::unknown;
    std::chrono::steady_clock::time_point idle_since{};
    bool idle = false;
    bool had_agents = false;  // an agent of it registered: it served, whatever ended it
  };

  // Placement over the slots: live agents only; not a pilot being released; not a pilot that
  // ends before the task's timeout would.
  bool usable(const TaskSpec& task, const NodeView& node) const {
    if (launcher_ == nullptr || !launcher_->node_alive(node.info->name)) return false;
    if (node.index < 0) return true;
    const PilotShared& p = pilots_[static_cast<std::size_t>(node.index / o_.nodes)];
    if (p.draining.load(std::memory_order_relaxed)) return false;
    if (task.timeout > Duration::zero()) {
      // Until the pilot thread has read the job's end from Slurm, a task with a timeout waits.
      const std::int64_t end = p.end_time.load(std::memory_order_relaxed);
      if (end <= 0) return false;
      const double must_end =
          wall_seconds_now() + std::chrono::duration<double>(task.timeout).count();
      if (must_end > static_cast<double>(end)) return false;
    }
    return true;
  }

  int pilot_of(const std::string& node) const {
    if (!node.starts_with("pilot")) return -1;
    const int j = std::atoi(node.c_str() + 5);
    return j >= 0 && j < o_.max_jobs ? j : -1;
  }

  std::string script_for(int j) const {
    const std::string chorus = o_.chorus.empty() ? self_executable() : o_.chorus;
    const std::string n = std::to_string(o_.nodes);
    const auto timeout_s = std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(o_.agent_timeout).count());
    // One agent per node, named after its slot; SLURM_NODEID is the node's index in the job.
    return "#!/bin/sh\n"
           "# chorus serve: pilot " +
           std::to_string(j) +
           " (its agents connect back to the instance)\n"
           "exec srun --nodes=" +
           n + " --ntasks=" + n +
           " --ntasks-per-node=1 --cpus-per-task=1 --kill-on-bad-exit=0 --no-kill --quiet "
           "--job-name=chorus-agents /bin/sh -c 'exec \"" +
           chorus + "\" agent --connect " + launcher_->endpoint() + " --keys \"" +
           launcher_->key_dir() + "\" --node pilot" + std::to_string(j) +
           "-$SLURM_NODEID --timeout " + std::to_string(timeout_s) + "s'\n";
  }

  void pilot_loop() {
    auto client = SlurmClient::open();
    if (!client.ok()) {
      std::fprintf(stderr, "chorus serve: no pilots: cannot open libslurm: %s\n",
                   client.status().message().c_str());
      return;
    }
    cancel_earlier_pilots(**client);
    std::vector<Pilot> pilots(static_cast<std::size_t>(o_.max_jobs));
    auto queue_empty_since = std::chrono::steady_clock::now();
    while (true) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, o_.round, [this] { return stopping_ || kick_.exchange(false); });
        if (stopping_) break;
      }
      round(**client, pilots, queue_empty_since);
    }
    for (Pilot& p : pilots) {
      if (p.job != 0) (void)(*client)->cancel(p.job);
    }
  }

  // A pilot that ended before any of its agents registered did not work (a bad partition
  // setting, a node that cannot run chorus): the next submission waits 2^n seconds (at most a
  // minute) and the job's output is shown.
  void ended_without_agents(std::size_t j, const Pilot& p, const SlurmJobInfo& info,
                            std::chrono::steady_clock::time_point now) {
    if (p.had_agents || info.state == SlurmJobState::cancelled) {
      failures_ = 0;
      return;
    }
    ++failures_;
    const auto wait = std::chrono::seconds(std::min(60, 1 << std::min(failures_, 6)));
    next_submit_ = now + wait;
    const std::string out =
        work_dir_ + "/pilot" + std::to_string(j) + "-" + std::to_string(p.job) + ".out";
    std::fprintf(stderr,
                 "chorus serve: pilot %zu (job %u) ended %s before its agents registered "
                 "(%d in a row; next try in %llds); its output %s:\n%s\n",
                 j, p.job, to_string(info.state), failures_, static_cast<long long>(wait.count()),
                 out.c_str(), file_tail(out, 5).c_str());
  }

  // The pilots an earlier instance on this state folder submitted (<state>/pilots/jobs, one id
  // per line, appended at each submission): cancelled at start. A killed instance leaves them
  // running until their agents' silence timeout; they are of no use to this one (new keys).
  // Only a job that is still one of ours is cancelled: named chorus-pilot*, working in this
  // state folder's pilots/ (job ids are reused, after a controller's state is reset for one).
  void cancel_earlier_pilots(SlurmClient& client) {
    std::vector<std::uint32_t> ids;
    {
      std::ifstream in(jobs_file());
      std::uint32_t id = 0;
      while (in >> id) ids.push_back(id);
    }
    int n = 0;
    if (!ids.empty()) {
      auto infos = client.query(ids);
      for (const SlurmJobInfo& info : infos.ok() ? *infos : std::vector<SlurmJobInfo>{}) {
        if (is_finished(info.state) || info.state == SlurmJobState::unknown ||
            !info.name.starts_with("chorus-pilot") || info.work_dir != work_dir_) {
          continue;
        }
        if (client.cancel(info.job_id).ok()) ++n;
      }
    }
    std::ofstream(jobs_file(), std::ios::trunc).close();
    if (n > 0)
      std::fprintf(stderr, "chorus serve: cancelled %d pilot job(s) of an earlier instance\n", n);
  }
  std::string jobs_file() const { return work_dir_ + "/jobs"; }

  void round(SlurmClient& client, std::vector<Pilot>& pilots,
             std::chrono::steady_clock::time_point& queue_empty_since) {
    const auto now = std::chrono::steady_clock::now();
    const std::size_t queued = queued_.load(std::memory_order_relaxed);
    if (queued > 0) queue_empty_since = now;
    // One controller query for every pilot.
    std::vector<std::uint32_t> ids;
    for (const Pilot& p : pilots) {
      if (p.job != 0) ids.push_back(p.job);
    }
    if (!ids.empty()) {
      auto infos = client.query(ids);
      if (!infos.ok()) {
        std::fprintf(stderr, "chorus serve: pilots: %s\n", infos.status().message().c_str());
        return;
      }
      std::size_t at = 0;
      for (std::size_t j = 0; j < pilots.size(); ++j) {
        Pilot& p = pilots[j];
        if (p.job == 0) continue;
        const SlurmJobInfo& info = (*infos)[at++];
        if (info.state != p.state) {
          std::fprintf(stderr, "chorus serve: pilot %zu (job %u): %s\n", j, p.job,
                       to_string(info.state));
        }
        if (info.state != p.state) p.idle = false;  // idleness counts within one state
        p.state = info.state;
        if (info.state == SlurmJobState::running) {
          pilots_[j].end_time.store(info.end_time, std::memory_order_relaxed);
        }
        if (pilots_[j].alive.load(std::memory_order_relaxed)) p.had_agents = true;
        if (is_finished(info.state) || info.state == SlurmJobState::unknown) {
          ended_without_agents(j, p, info, now);
          p = Pilot{};
          pilots_[j].end_time.store(0, std::memory_order_relaxed);
          pilots_[j].draining.store(false, std::memory_order_relaxed);
        }
      }
    }
    // Release what has had nothing to do for idle_timeout: drain first, cancel next round.
    for (std::size_t j = 0; j < pilots.size(); ++j) {
      Pilot& p = pilots[j];
      if (p.job == 0) continue;
      const bool busy = pilots_[j].running.load(std::memory_order_relaxed) > 0;
      const bool pending = p.state == SlurmJobState::pending;
      const bool idle = pending ? queued == 0 : !busy;
      if (!idle) {
        p.idle = false;
        if (pilots_[j].draining.exchange(false)) {
          std::fprintf(stderr, "chorus serve: pilot %zu (job %u): in use again\n", j, p.job);
        }
        continue;
      }
      if (!p.idle) {
        p.idle = true;
        p.idle_since = pending ? queue_empty_since : now;
      }
      if (now - p.idle_since < o_.idle_timeout) continue;
      if (!pending && !pilots_[j].draining.exchange(true)) continue;  // drained: cancel next round
      std::fprintf(
          stderr, "chorus serve: pilot %zu (job %u): idle for %llds, released\n", j, p.job,
          static_cast<long long>(
              std::chrono::duration_cast<std::chrono::seconds>(now - p.idle_since).count()));
      (void)client.cancel(p.job);
    }
    // Grow: work waits, no pilot is on its way, and a slot group is free. With pilots up, the
    // queue must have stayed non-empty for two rounds: the count is the coordinator's of its
    // last turn, taken before that turn placed tasks on a pilot that just registered.
    const bool any =
        std::any_of(pilots.begin(), pilots.end(), [](const Pilot& p) { return p.job != 0; });
    waiting_rounds_ = queued == 0 ? 0 : waiting_rounds_ + 1;
    if (queued == 0 || now < next_submit_ || (any && waiting_rounds_ < 2)) return;
    // On its way: pending, or running with no agent registered yet.
    bool on_the_way = false;
    for (std::size_t j = 0; j < pilots.size(); ++j) {
      const Pilot& p = pilots[j];
      if (p.job != 0 && (p.state != SlurmJobState::running ||
                         !pilots_[j].alive.load(std::memory_order_relaxed))) {
        on_the_way = true;
      }
    }
    if (on_the_way) {
      waiting_rounds_ = 0;
      return;
    }
    auto free =
        std::find_if(pilots.begin(), pilots.end(), [](const Pilot& p) { return p.job == 0; });
    if (free == pilots.end()) return;
    const int j = static_cast<int>(free - pilots.begin());
    BatchJobRequest r;
    r.script = script_for(j);
    r.nodes = o_.nodes;
    r.exclusive = true;
    r.no_kill = true;
    r.time_limit_minutes = static_cast<std::uint32_t>(std::max<std::int64_t>(
        1, (std::chrono::duration_cast<std::chrono::seconds>(o_.walltime).count() + 59) / 60));
    r.partition = o_.partition;
    r.job_name = "chorus-pilot" + std::to_string(j);
    r.work_dir = work_dir_;
    r.stdout_path = work_dir_ + "/pilot" + std::to_string(j) + "-%j.out";
    auto job = client.submit_batch(r);
    if (!job.ok()) {
      std::fprintf(stderr, "chorus serve: cannot submit pilot %d: %s\n", j,
                   job.status().message().c_str());
      return;
    }
    free->job = *job;
    free->state = SlurmJobState::pending;
    free->idle = false;
    waiting_rounds_ = 0;
    std::ofstream(jobs_file(), std::ios::app) << *job << '\n';
    std::fprintf(stderr, "chorus serve: pilot %d (job %u) submitted: %zu tasks wait\n", j, *job,
                 queued);
  }

  PilotsBackendOptions o_;
  std::unique_ptr<PilotShared[]> pilots_;
  InprocLauncher functions_;
  std::unique_ptr<Launcher> mpi_;
  std::vector<NodeInfo> nodes_;
  std::unique_ptr<AgentLauncher> launcher_;
  std::unique_ptr<Launcher> bound_mpi_;  // mpi_, ended with its nodes' agents (start to stop)
  std::unique_ptr<AgentFacts> facts_;
  std::string work_dir_;
  std::atomic<std::size_t> queued_{0};
  int failures_ = 0;        // pilots in a row that ended without agents (the pilot thread's)
  int waiting_rounds_ = 0;  // rounds in a row with tasks queued and no pilot on its way
  std::chrono::steady_clock::time_point next_submit_{};
  TimePoint next_count_{};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> kick_{false};  // work arrived: a round now
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<ExecutionBackend> make_pilots_backend(PilotsBackendOptions options) {
  return std::make_unique<PilotsBackend>(std::move(options));
}

}  // namespace chorus
