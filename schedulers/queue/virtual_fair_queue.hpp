// VirtualFairQueue: the engine behind cfq and uwfq. It simulates a fluid fair-queuing system
// alongside the real one and dispatches the queued task whose job finishes first there.
//
// The virtual system: capacity C cores shared by the active flows in proportion to their weights;
// the global virtual time V advances at C / Σ w (active flows) per second of real time, so a flow
// of weight w gets w units of V-progress per unit of its work. A flow is active while its virtual
// end E (the virtual finish of all work it has submitted) is ahead of V; when V reaches E the flow
// lingers for `grace` seconds of real time, still counted in Σw (so a user who is between two
// back-to-back jobs keeps its share of the virtual system instead of letting V race ahead), and
// then retires. A job of work R (core-seconds, from a WorkEstimator) submitted by flow f gets a
// deadline on f's chain: jobs of a flow follow each other from the flow's start (E_f if f is
// active or lingering, so a returning user keeps its place; V if f is new or retired), each
// D = previous D + R / w_f. next() returns the first queued task of the job with the smallest
// deadline (ties: the job seen first). Non-preemptive: a started task is not taken back.
//
// The order of the chain: cfq (a flow is one job) chains in arrival order; tasks that arrive
// while the job is the flow's last grow it. uwfq orders a user's jobs by a second fair-queuing
// system inside the user (as the paper's Spark implementation does): the user's virtual service,
// w_u per unit of V, is shared by its unfinished jobs in proportion to their weights w_j; a job
// arriving at user-virtual time U gets the user-virtual deadline U + R_j / w_j and leaves that
// system when U reaches it. The chain runs in user-virtual-deadline order, so a user's short job
// overtakes its own long ones instead of waiting behind them; a job that leaves moves the chain's
// base by R_j / w_u, so later deadlines stay put. Tasks arriving for a job still in the user's
// system grow the job (R_j and its user-virtual deadline). A chain job's deadline is not stored:
// it is the base plus the work of the chain up to and including the job, over w_u, read from the
// prefix sums of a ChainTree in O(log k); so a job that overtakes k others moves their deadlines
// without touching them, and the flow's queued jobs are kept in chain order, which overtaking
// never changes. A job that leaves the chain keeps the deadline it had (frozen in Job::deadline).
// Before a job joins an active user's chain, the service the user received since the chain's
// base, (V - base) · w_u, is credited to the chain in chain order (settle_chain): the jobs it
// covers leave with their deadlines (all at most V), base becomes V, no deadline moves. So a
// new job is anchored at V, never in the past: without it a user active for long with several
// jobs side by side in its own system (none leaving it) kept a base far behind V, and its next
// short job overtook every other user's new one (docs/uwfq-beyond-the-paper.md).
//
// A flow is a user (uwfq) or a job (cfq). Every operation is O(log n) in queued jobs and active
// flows, amortised over the flows retiring while V advances (a retiring user's chain is dropped
// in O(its jobs), each job having paid for its insertion). Dispatch order is kept in two levels:
// each flow's queued jobs in deadline order (ReadyEntry) in a RunHeap (a sorted run for jobs
// that come after the flow's last one, the usual case, O(1) and cache-local;
// a binary heap for the others), and a heap over the flows' best jobs (as many as active flows),
// so a decision at a million queued jobs touches a few cache lines instead of a path down a
// million-entry heap. The smallest of the flows' smallest is the global smallest: the order is
// exactly that of one heap over all jobs. The orders keep superseded entries as stale instead of
// erasing them (no allocation per operation); a heap is rebuilt from its live entries when stale
// ones outnumber them.
//
// The short-job lane (off unless `lane_cores` is > 0 or auto; docs/uwfq-beyond-the-paper.md finding
// 7): a task of a long job (work above `lane_work`, or above the mean work of the last jobs that
// left the queue) does not start when that would leave fewer than lane_cores of C free while long
// tasks run; next() then returns the first flow's best job that is short, passing over at most
// kLaneScan flows. Without it, equal pieces of a heavy job end together and a short job arriving
// between two such waves waits for the next one (finding 3). The cores it keeps idle are the
// price, paid by long jobs (measured there).
//
// Time: only through the `now` arguments (seconds since the first `now` seen). C is taken from
// the options, or, when that is 0, from the cluster's total cores at the first next(); until then
// V does not advance.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/queue/chain_tree.hpp"
#include "schedulers/queue/passed_tasks.hpp"
#include "schedulers/queue/task_fifo.hpp"
#include "schedulers/queue/work_estimator.hpp"

namespace chorus {

struct FairQueueOptions {
  int capacity_cores = 0;                     // C; 0 = the cluster's total cores
  std::map<std::string, double> weights;      // by flow name (user or job); missing = 1
  std::map<std::string, double> job_weights;  // uwfq: w_j by job name (TaskSpec::job); missing = 1
  Duration grace{0};                          // a retired flow back within this keeps its place
  std::unique_ptr<WorkEstimator> estimator;   // null = DeclaredWork (estimate × cores)
  // The short-job lane (docs/uwfq-beyond-the-paper.md finding 7): while a task of a long job (work
  // above lane_work core-seconds) runs, another starts only if one more busy core still leaves
  // lane_cores of C free (one always may when none runs), so a short job arriving while long ones
  // fill the cluster finds a core free instead of waiting for the first piece to end. 0 = no
  // lane. lane_work unset: the mean work of the last kLaneWindow jobs that left the queue,
  // recomputed every 16 (none yet: no job is long). lane_auto (`lane_cores: auto`): the lane
  // sizes itself to twice the cores short jobs' tasks held on average over the last
  // kLaneTau_s seconds (at least 1, at most C / 16); lane_cores is then ignored.
  int lane_cores = 0;
  bool lane_auto = false;
  std::optional<double> lane_work;

  // Errors: invalid_argument for a weight (user or job) that is not a positive finite number, a
  // negative capacity, a negative grace period, negative lane cores or a lane work that is not a
  // positive finite number, naming the offending entry.
  Status validate() const;
};

// The options cfq and uwfq take from a scheduler section: `weights` (users' shares), `grace`,
// and the short-job lane, `lane_cores` and `lane_work`.
std::vector<OptionSpec> fair_queue_option_specs();
// Their values with `default_grace` for a missing grace, and from the context the job weights and
// the history: with history, work is HistoryWork seeded with it (the mean of past runs of a job's
// class; declared estimates for classes never seen; it also learns from this run's finished
// attempts); without, the declared estimates.
FairQueueOptions fair_queue_options(PolicyArgs& args, Duration default_grace);

enum class FlowKind : std::uint8_t { user, job };

class VirtualFairQueue : public QueuePolicy {
 public:
  // `options` must be valid (FairQueueOptions::validate()).
  VirtualFairQueue(FlowKind kind, FairQueueOptions options);

  void on_ready(const TaskSpec& task, TimePoint now) override;
  std::optional<TaskId> next(const ClusterView& cluster) override;
  void on_start(const TaskSpec& task, TimePoint now) override;
  void on_finish(const TaskSpec& task, TaskState outcome, Duration ran_for, TimePoint now) override;
  void remove(TaskId task) override;
  std::size_t size() const override { return size_; }
  // A passed-over task (policy.hpp) sets its flow aside for the pass, as the lane does a held
  // one: the user's later tasks come after it in its chain anyway.
  void begin_pass() override { passed_.clear(); }
  bool pass_over(TaskId task) override { return passed_.add(task); }

  // Introspection for tests and reports.
  double virtual_time() const { return v_; }
  // The deadline a queued task would be dispatched by; nullopt when it is not queued.
  std::optional<double> deadline_of(TaskId task) const;
  // Flows whose virtual end is ahead of V.
  std::size_t active_flows() const { return n_active_; }
  // Flows whose virtual end V has passed less than `grace` ago.
  std::size_t lingering_flows() const { return n_lingering_; }
  // The lane: cores held by running tasks of long jobs, and the work above which a job is long
  // (infinity while the median has no sample).
  double long_cores() const { return long_cores_; }
  double lane_cutoff() const { return lane_cutoff_; }
  // The lane's width now: lane_cores, or what lane_auto made of the short jobs' demand.
  int lane_width() const { return lane_width_; }

  static constexpr std::size_t kLaneWindow = 256;
  static constexpr double kLaneTau_s = 60;  // lane_auto's averaging time

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  enum class FlowState : std::uint8_t { idle, active, lingering };

  // A flow's queued jobs in dispatch order. cfq: (0, deadline, seq). uwfq: (chain generation,
  // user-virtual deadline, seq), the order of the user's chain, which later jobs overtaking
  // earlier ones never changes (it moves deadlines, not their order; see job_deadline). A job
  // that leaves the chain keeps its entry: it leaves from the front, in that order, when U
  // reaches its user-virtual deadline (advance_chain) or when the chain ends (clear_chain; a
  // job arriving then starts a new generation). One that settle_chain takes out while its
  // user-virtual deadline is still ahead of U is re-keyed just above U, and above the jobs
  // settled before it at the same U (Flow::settled_key), so it sorts after the jobs that left
  // when U reached them and before every job still on the chain or arriving later (at U + R/w).
  // Keying it at U exactly tied with a job that left at U, and seq put the older one first
  // (found by the reference test). No push per departure: the hot path is one pop per dispatch.
  // 24 bytes: the generation is compared as a serial number (wrapping), since the generations
  // of one flow's queued jobs are never 2^31 apart.
  struct ReadyEntry {
    double key;
    std::uint64_t seq;
    std::uint32_t epoch;
    std::uint32_t job;
    bool operator>(const ReadyEntry& o) const {
      if (epoch != o.epoch) return static_cast<std::int32_t>(epoch - o.epoch) > 0;
      return key != o.key ? key > o.key : seq > o.seq;
    }
  };
  // A min-heap that leaves superseded entries in place; `valid` tells them apart.
  template <typename Entry>
  class LazyHeap {
   public:
    bool empty() const { return v_.empty(); }
    const Entry& top() const { return v_.front(); }
    void push(const Entry& e) {
      v_.push_back(e);
      std::push_heap(v_.begin(), v_.end(), std::greater<>{});
    }
    void pop() {
      std::pop_heap(v_.begin(), v_.end(), std::greater<>{});
      v_.pop_back();
    }
    void clear() { v_.clear(); }
    template <typename Valid>
    void drop_stale_top(Valid valid) {
      while (!v_.empty() && !valid(v_.front())) pop();
    }
    template <typename Valid>
    void compact_if_bloated(std::size_t live, Valid valid) {
      if (v_.size() < 1024 || v_.size() < 4 * live) return;
      std::erase_if(v_, [&](const Entry& e) { return !valid(e); });
      std::make_heap(v_.begin(), v_.end(), std::greater<>{});
    }

   private:
    std::vector<Entry> v_;
  };
  // A flow's queued jobs: a LazyHeap, except that entries pushed in non-decreasing order (the
  // usual case: a user's new job finishes after its earlier ones) go to a sorted run instead, so
  // push and pop are O(1) and touch one cache line; only out-of-order entries pay O(log n).
  // The same contract as LazyHeap: the smallest entry first, superseded ones skipped by `valid`.
  template <typename Entry>
  class RunHeap {
   public:
    bool empty() const { return head_ == run_.size() && heap_.empty(); }
    const Entry& top() const { return from_run() ? run_[head_] : heap_.top(); }
    void push(const Entry& e) {
      if (head_ == run_.size() || !(run_.back() > e)) {
        run_.push_back(e);
      } else {
        heap_.push(e);
      }
    }
    void pop() {
      if (!from_run()) {
        heap_.pop();
      } else if (++head_ == run_.size()) {
        run_.clear();
        head_ = 0;
      } else if (head_ >= 1024 && 2 * head_ >= run_.size()) {
        run_.erase(run_.begin(), run_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }
    void clear() {
      run_.clear();
      head_ = 0;
      heap_.clear();
    }
    template <typename Valid>
    void drop_stale_top(Valid valid) {
      while (!empty() && !valid(top())) pop();
    }
    template <typename Valid>
    void compact_if_bloated(std::size_t live, Valid valid) {
      heap_.compact_if_bloated(live, valid);
      std::size_t stored = run_.size() - head_;
      if (stored < 1024 || stored < 4 * live) return;
      run_.erase(run_.begin(), run_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
      std::erase_if(run_, [&](const Entry& e) { return !valid(e); });  // keeps the order
    }

   private:
    bool from_run() const {
      return head_ < run_.size() && (heap_.empty() || !(run_[head_] > heap_.top()));
    }
    std::vector<Entry> run_;  // sorted; live from head_
    std::size_t head_ = 0;
    LazyHeap<Entry> heap_;
  };

  // next() reads the first fields (published, ready_gen, the heap of queued jobs) of the flows
  // it looks at: they come first, in one or two cache lines.
  struct Flow {
    bool published = false;
    bool anonymous = false;  // a cfq task without a job: recycled once idle and drained
    FlowState state = FlowState::idle;
    bool best_dirty = true;  // uwfq: best_deadline must be recomputed (the chain moved before it)
    std::uint32_t best_job = kNone;  // uwfq
    std::uint64_t ready_gen = 0;
    // The flow's queued jobs in dispatch order (ReadyEntry); its top, when there is one, is
    // published in ready_flows_ under ready_gen (see refresh_ready).
    RunHeap<ReadyEntry> ready;
    std::size_t n_ready = 0;
    double best_deadline = 0;
    std::uint64_t best_seq = 0;
    double weight = 1;
    double start = 0;         // S: virtual start of the flow's current busy period
    double end = 0;           // E: virtual finish of everything it submitted
    double linger_until = 0;  // real seconds; meaningful while lingering
    std::uint64_t gen = 0;    // changes whenever the flow enters a heap; older entries are stale
    std::uint32_t tail_job = kNone;  // cfq: the last job in its chain
    // uwfq, the user's own fair-queuing system over its jobs (see on_ready_user):
    std::uint32_t chain_gen = 0;  // +1 whenever the chain starts again from empty (U restarts)
    double u = 0;                 // user-virtual time
    double chain_weight = 0;      // Σ w_j over its chain (chains_[flow])
    double base = 0;              // S plus the work of chain jobs finished there, over w_u
    double served_v = 0;          // V up to which the user's system has been advanced
    double settled_key = 0;       // the last key settle_chain gave in this generation
  };

  // The fields ready_valid() and job_deadline() read come first: one cache line per look.
  struct Job {
    std::uint32_t flow = kNone;
    std::uint32_t chain_gen = 0;  // uwfq
    bool in_ready = false;
    bool in_chain = false;  // uwfq
    std::uint64_t seq = 0;
    double deadline = 0;  // cfq; uwfq: frozen when the job leaves the chain (job_deadline)
    // uwfq:
    double ud = 0;
    double work = 0;    // R_j: what the user's chain has still to serve of it
    double weight = 1;  // w_j
    // Core-seconds submitted (uwfq and cfq): whether the lane counts the job as long; not
    // `work`, which settle_chain shrinks as the virtual system serves the job.
    double submitted = 0;
    std::size_t live = 0;  // queued tasks not removed
    TaskFifo queued;       // may hold removed tasks, skipped lazily
    std::string key;       // empty for one-task jobs
  };
  struct FlowReadyEntry {
    double deadline;
    std::uint64_t seq;
    std::uint64_t gen;
    std::uint32_t flow;
    bool operator>(const FlowReadyEntry& o) const {
      return deadline != o.deadline ? deadline > o.deadline : seq > o.seq;
    }
  };
  struct FlowEntry {
    double key;  // E (active) or the real expiry (lingering)
    std::uint64_t gen;
    std::uint32_t flow;
    bool operator>(const FlowEntry& o) const { return key != o.key ? key > o.key : gen > o.gen; }
  };
  double seconds_since_epoch(TimePoint now);
  void advance(TimePoint now);
  std::uint32_t flow_for(const TaskSpec& task);
  std::uint32_t new_job(std::uint32_t flow, std::string key);
  void set_flow_end(std::uint32_t flow, double end);
  void leave_sets(std::uint32_t flow);
  void recycle_if_anonymous(std::uint32_t flow);
  void reset_flow(std::uint32_t flow);
  void set_job_deadline(std::uint32_t job, double deadline);
  void mark_ready(std::uint32_t job);
  void unmark_ready(std::uint32_t job);
  void refresh_ready(std::uint32_t flow);
  void release_job_if_done(std::uint32_t job);
  std::uint32_t on_ready_user(const TaskSpec& task, std::uint32_t flow, double work);
  void advance_chain(std::uint32_t flow);
  void settle_chain(std::uint32_t flow);
  void clear_chain(std::uint32_t flow);
  void chain_changed(std::uint32_t flow, const ChainKey& at);
  double job_deadline(std::uint32_t job) const;
  ReadyEntry ready_entry(std::uint32_t job) const {
    const Job& j = jobs_[job];
    return kind_ == FlowKind::user ? ReadyEntry{j.ud, j.seq, j.chain_gen, job}
                                   : ReadyEntry{j.deadline, j.seq, 0, job};
  }

  FlowKind kind_;
  FairQueueOptions options_;
  double capacity_ = 0;
  double grace_s_ = 0;
  std::optional<TimePoint> epoch_;
  double last_ = 0;  // real seconds since epoch_ of the last advance
  double v_ = 0;
  double active_weight_ = 0;

  std::vector<Flow> flows_;
  // uwfq: each user's jobs not yet finished in its own system, by user-virtual deadline; by flow,
  // kept out of Flow (which cfq recycles for every job without a name).
  std::vector<ChainTree> chains_;
  std::unordered_map<std::string, std::uint32_t> flow_by_name_;
  std::vector<std::uint32_t> free_flows_;
  bool active_valid(const FlowEntry& e) const {
    return flows_[e.flow].state == FlowState::active && flows_[e.flow].gen == e.gen;
  }
  bool lingering_valid(const FlowEntry& e) const {
    return flows_[e.flow].state == FlowState::lingering && flows_[e.flow].gen == e.gen;
  }
  bool ready_valid(const ReadyEntry& e) const {
    const Job& j = jobs_[e.job];
    if (!j.in_ready || j.seq != e.seq) return false;
    return kind_ == FlowKind::user ? j.chain_gen == e.epoch && j.ud == e.key : j.deadline == e.key;
  }

  LazyHeap<FlowEntry> active_;     // by E
  LazyHeap<FlowEntry> lingering_;  // by real expiry
  std::size_t n_active_ = 0;
  std::size_t n_lingering_ = 0;
  std::uint64_t next_gen_ = 0;

  std::vector<Job> jobs_;
  std::vector<std::uint32_t> free_jobs_;
  std::unordered_map<std::string, std::uint32_t> job_by_key_;
  bool flow_ready_valid(const FlowReadyEntry& e) const {
    return flows_[e.flow].published && flows_[e.flow].ready_gen == e.gen;
  }
  LazyHeap<FlowReadyEntry> ready_flows_;  // each flow's best queued job, by (deadline, seq)
  std::size_t n_published_ = 0;
  std::uint64_t next_seq_ = 0;

  std::vector<std::uint32_t> job_of_task_;  // by task id; kNone = not queued
  std::size_t size_ = 0;

  // The short-job lane (FairQueueOptions::lane_cores, lane_auto); all idle when it is off.
  bool lane_on() const { return options_.lane_cores > 0 || options_.lane_auto; }
  bool holds_back(const Job& j) const {
    return j.submitted > lane_cutoff_ && long_cores_ > 0 &&
           capacity_ - running_cores_ - 1 < lane_width_;
  }
  void note_job_work(double work);
  // lane_auto: folds the short cores held since the last call into their average, resizes.
  void size_lane(TimePoint now);
  struct Running {
    float cores = 0;  // 0: not running (or started before the lane counted it)
    bool is_long = false;
    bool is_short = false;  // neither for a service
  };
  static constexpr std::size_t kLaneScan = 64;  // flows next() passes over looking for a short job
  std::vector<FlowReadyEntry> lane_passed_;     // those it passed over (kept for its capacity)
  PassedTasks passed_;                          // passed over in this dispatch pass (pass_over)
  std::vector<Running> running_;                // by task id
  double running_cores_ = 0;                    // held by the tasks this queue started
  double long_cores_ = 0;                       // of which by long jobs' tasks
  double short_cores_ = 0;                      // and by short jobs' (not services)
  int lane_width_ = 0;                          // lane_cores, or lane_auto's current width
  double short_avg_ = 0;                        // lane_auto: short_cores_ averaged over time
  double short_avg_at_ = 0;                     // lane_auto: when short_avg_ was last folded
  double lane_cutoff_ = std::numeric_limits<double>::infinity();
  std::vector<double> lane_window_;  // the last kLaneWindow jobs' work, a ring
  std::size_t lane_next_ = 0;        // where the ring writes next
  std::size_t lane_since_ = 0;       // jobs noted since lane_cutoff_ was computed
};

}  // namespace chorus
