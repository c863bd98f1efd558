#include "schedulers/queue/virtual_fair_queue.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string>

namespace chorus {

std::vector<OptionSpec> fair_queue_option_specs() {
  return {{"weights", OptionKind::user_weights},
          {"grace", OptionKind::duration},
          {"lane_cores", OptionKind::text},
          {"lane_work", OptionKind::number}};
}

FairQueueOptions fair_queue_options(PolicyArgs& args, Duration default_grace) {
  FairQueueOptions o;
  o.weights = args.user_weights("weights").value_or(std::map<std::string, double>{});
  o.grace = args.duration("grace").value_or(default_grace);
  o.job_weights = args.context().job_weights;
  if (const OptionEntry* e = args.find("lane_cores")) {
    const std::string& text = e->value.text;
    char* end = nullptr;
    const double n = std::strtod(text.c_str(), &end);
    if (text == "auto") {
      o.lane_auto = true;
    } else if (text.empty() || *end != '\0' || !(n >= 0) || n != std::floor(n) || n > 1e6) {
      args.fail(e->value.at, "'lane_cores' of " + args.policy() +
                                 " must be a whole number of cores, 0 (no lane) or more, or "
                                 "'auto', got '" +
                                 text + "'");
    } else {
      o.lane_cores = static_cast<int>(n);
    }
  }
  if (const OptionEntry* e = args.find("lane_work")) {
    const double w = *args.number("lane_work");
    if (!(w > 0)) {
      args.fail(e->value.at, "'lane_work' of " + args.policy() +
                                 " must be a positive number of core-seconds, got " +
                                 e->value.text);
    } else {
      o.lane_work = w;
    }
  }
  if (auto samples = args.history()) {
    auto history = std::make_unique<HistoryWork>();
    for (const auto& [job_class, seconds] : *samples) history->add_sample(job_class, seconds);
    o.estimator = std::move(history);
  }
  return o;
}

Status FairQueueOptions::validate() const {
  if (capacity_cores < 0) {
    return invalid_argument(
        "cluster capacity must be 0 (take it from the cluster) or positive, got " +
        std::to_string(capacity_cores));
  }
  if (grace < Duration::zero()) return invalid_argument("grace period must not be negative");
  if (lane_cores < 0) {
    return invalid_argument("lane cores must be 0 (no lane) or more, got " +
                            std::to_string(lane_cores));
  }
  if (lane_work && (!(*lane_work > 0) || !std::isfinite(*lane_work))) {
    return invalid_argument("lane work must be a positive number of core-seconds, got " +
                            std::to_string(*lane_work));
  }
  for (const auto& [name, w] : weights) {
    if (!(w > 0) || !std::isfinite(w)) {
      return invalid_argument("weight of '" + name + "' must be a positive number, got " +
                              std::to_string(w));
    }
  }
  for (const auto& [name, w] : job_weights) {
    if (!(w > 0) || !std::isfinite(w)) {
      return invalid_argument("weight of job '" + name + "' must be a positive number, got " +
                              std::to_string(w));
    }
  }
  return {};
}

VirtualFairQueue::VirtualFairQueue(FlowKind kind, FairQueueOptions options)
    : kind_(kind), options_(std::move(options)) {
  if (!options_.estimator) options_.estimator = std::make_unique<DeclaredWork>();
  capacity_ = options_.capacity_cores;
  if (options_.lane_work) lane_cutoff_ = *options_.lane_work;
  lane_width_ = options_.lane_auto ? 1 : options_.lane_cores;
  grace_s_ = std::chrono::duration<double>(options_.grace).count();
}

double VirtualFairQueue::seconds_since_epoch(TimePoint now) {
  if (!epoch_) epoch_ = now;
  return std::chrono::duration<double>(now - *epoch_).count();
}

// Runs the fluid system from last_ to now: V grows at C / Σw; on the way, flows whose end V
// reaches start lingering and lingering flows whose grace ran out retire, each at its instant
// (which changes the rate for the rest of the interval).
void VirtualFairQueue::advance(TimePoint now) {
  double t = seconds_since_epoch(now);
  if (t <= last_) return;
  if (capacity_ <= 0) {
    last_ = t;
    return;
  }
  constexpr double kNever = std::numeric_limits<double>::infinity();
  auto active_ok = [this](const FlowEntry& e) { return active_valid(e); };
  auto lingering_ok = [this](const FlowEntry& e) { return lingering_valid(e); };
  while (n_active_ + n_lingering_ > 0 && last_ < t) {
    active_.drop_stale_top(active_ok);
    lingering_.drop_stale_top(lingering_ok);
    double rate = capacity_ / active_weight_;
    double reach = n_active_ == 0 ? kNever : last_ + (active_.top().key - v_) / rate;
    double expiry = n_lingering_ == 0 ? kNever : lingering_.top().key;
    double at = std::min(reach, expiry);
    if (at > t) {
      v_ += rate * (t - last_);
      break;
    }
    at = std::max(at, last_);
    if (reach <= expiry) {
      std::uint32_t f = active_.top().flow;
      active_.pop();
      v_ = std::max(v_, flows_[f].end);
      last_ = at;
      leave_sets(f);
      clear_chain(f);
      if (grace_s_ > 0) {
        Flow& flow = flows_[f];
        flow.state = FlowState::lingering;
        flow.gen = ++next_gen_;
        flow.linger_until = at + grace_s_;
        lingering_.push({flow.linger_until, flow.gen, f});
        ++n_lingering_;
        active_weight_ += flow.weight;
      } else {
        recycle_if_anonymous(f);
      }
    } else {
      std::uint32_t f = lingering_.top().flow;
      lingering_.pop();
      v_ += rate * (at - last_);
      last_ = at;
      leave_sets(f);
      recycle_if_anonymous(f);
    }
  }
  if (n_active_ + n_lingering_ == 0) active_weight_ = 0;  // drop accumulated rounding
  last_ = t;
}

std::uint32_t VirtualFairQueue::flow_for(const TaskSpec& task) {
  // cfq: one flow per job; a task without a job is a flow of its own.
  bool anonymous = kind_ == FlowKind::job && task.job.empty();
  const std::string& name = kind_ == FlowKind::user ? task.user : task.job;
  if (!anonymous) {
    auto it = flow_by_name_.find(name);
    if (it != flow_by_name_.end()) return it->second;
  }
  if (anonymous && !free_flows_.empty()) {
    std::uint32_t id = free_flows_.back();
    free_flows_.pop_back();
    reset_flow(id);
    flows_[id].anonymous = true;
    return id;
  }
  Flow f;
  f.anonymous = anonymous;
  if (!anonymous) {
    auto w = options_.weights.find(name);
    if (w != options_.weights.end()) f.weight = w->second;
    if (kind_ == FlowKind::job) {
      auto jw = options_.job_weights.find(name);
      if (jw != options_.job_weights.end()) f.weight = jw->second;
    }
  }
  flows_.push_back(f);
  if (kind_ == FlowKind::user) chains_.emplace_back();
  auto id = static_cast<std::uint32_t>(flows_.size() - 1);
  if (!anonymous) flow_by_name_.emplace(name, id);
  return id;
}

std::uint32_t VirtualFairQueue::new_job(std::uint32_t flow, std::string key) {
  std::uint32_t id;
  if (!free_jobs_.empty()) {
    id = free_jobs_.back();
    free_jobs_.pop_back();  // reset by release_job_if_done
  } else {
    jobs_.emplace_back();
    id = static_cast<std::uint32_t>(jobs_.size() - 1);
  }
  Job& j = jobs_[id];
  j.flow = flow;
  j.seq = next_seq_++;
  j.key = std::move(key);
  if (!j.key.empty()) job_by_key_[j.key] = id;
  return id;
}

// Takes a flow out of the active or lingering set (and out of Σw): it is idle.
void VirtualFairQueue::leave_sets(std::uint32_t flow) {
  Flow& f = flows_[flow];
  if (f.state == FlowState::active) --n_active_;
  if (f.state == FlowState::lingering) --n_lingering_;
  if (f.state != FlowState::idle) active_weight_ -= f.weight;
  f.state = FlowState::idle;  // its heap entries are stale now
}

// Without this, a long-running cfq fed tasks without a job would keep one flow per task ever
// seen. Named flows (users, jobs) stay: they are as many as the names in use.
void VirtualFairQueue::recycle_if_anonymous(std::uint32_t flow) {
  Flow& f = flows_[flow];
  if (!f.anonymous || f.state != FlowState::idle) return;
  if (f.tail_job != kNone && jobs_[f.tail_job].live > 0) return;
  std::uint32_t tail = f.tail_job;
  reset_flow(flow);
  if (tail != kNone) release_job_if_done(tail);
  free_flows_.push_back(flow);
}

// A fresh flow in slot `flow`, keeping its heap's storage (no allocation per recycled flow).
void VirtualFairQueue::reset_flow(std::uint32_t flow) {
  Flow& f = flows_[flow];
  if (f.published) --n_published_;
  RunHeap<ReadyEntry> storage = std::move(f.ready);
  storage.clear();
  f = Flow{};
  f.ready = std::move(storage);
}

// A flow's end moved (more work): active if ahead of V, else it lingers afresh.
void VirtualFairQueue::set_flow_end(std::uint32_t flow, double end) {
  leave_sets(flow);
  Flow& f = flows_[flow];
  f.end = end;
  f.gen = ++next_gen_;
  if (end > v_) {
    f.state = FlowState::active;
    active_.push({end, f.gen, flow});
    ++n_active_;
    active_.compact_if_bloated(n_active_, [this](const FlowEntry& e) { return active_valid(e); });
  } else if (grace_s_ > 0) {
    f.state = FlowState::lingering;
    f.linger_until = last_ + grace_s_;
    lingering_.push({f.linger_until, f.gen, flow});
    ++n_lingering_;
  } else {
    return;
  }
  active_weight_ += f.weight;
}

// cfq only: uwfq's chain deadlines follow from the chain (job_deadline).
void VirtualFairQueue::set_job_deadline(std::uint32_t job, double deadline) {
  Job& j = jobs_[job];
  j.deadline = deadline;
  if (!j.in_ready) return;
  flows_[j.flow].ready.push(ready_entry(job));  // the old entry is stale now
  refresh_ready(j.flow);
}

double VirtualFairQueue::job_deadline(std::uint32_t job) const {
  const Job& j = jobs_[job];
  if (kind_ != FlowKind::user || !j.in_chain) return j.deadline;
  const Flow& f = flows_[j.flow];
  return f.base + chains_[j.flow].prefix_work(ChainKey{j.ud, j.seq, job}) / f.weight;
}

void VirtualFairQueue::mark_ready(std::uint32_t job) {
  Job& j = jobs_[job];
  if (j.in_ready) return;
  j.in_ready = true;
  Flow& f = flows_[j.flow];
  ++f.n_ready;
  f.ready.push(ready_entry(job));
  f.ready.compact_if_bloated(f.n_ready, [this](const ReadyEntry& e) { return ready_valid(e); });
  refresh_ready(j.flow);
}

void VirtualFairQueue::unmark_ready(std::uint32_t job) {
  Job& j = jobs_[job];
  if (!j.in_ready) return;
  j.in_ready = false;  // its entries are stale now
  --flows_[j.flow].n_ready;
  refresh_ready(j.flow);
}

// Keeps the invariant next() relies on: a flow is published in ready_flows_ exactly when it has a
// queued job, under the (deadline, seq) of its best one, and the top of its own heap is valid.
void VirtualFairQueue::refresh_ready(std::uint32_t flow) {
  Flow& f = flows_[flow];
  f.ready.drop_stale_top([this](const ReadyEntry& e) { return ready_valid(e); });
  if (f.ready.empty()) {
    if (f.published) {
      f.published = false;  // its entry in ready_flows_ is stale now
      --n_published_;
    }
    return;
  }
  const ReadyEntry& top = f.ready.top();
  double deadline;
  if (kind_ == FlowKind::user) {
    if (f.published && !f.best_dirty && top.seq == f.best_seq) return;  // the usual case: O(1)
    deadline = job_deadline(top.job);
    f.best_dirty = false;
    f.best_job = top.job;
  } else {
    deadline = top.key;  // cfq's entries carry the deadline itself
  }
  if (f.published && deadline == f.best_deadline && top.seq == f.best_seq) return;
  if (!f.published) {
    f.published = true;
    ++n_published_;
  }
  f.best_deadline = deadline;
  f.best_seq = top.seq;
  f.ready_gen = ++next_gen_;
  ready_flows_.push({f.best_deadline, f.best_seq, f.ready_gen, flow});
  ready_flows_.compact_if_bloated(n_published_,
                                  [this](const FlowReadyEntry& e) { return flow_ready_valid(e); });
}

// A job with nothing queued that is no longer its flow's last can never be extended again.
void VirtualFairQueue::release_job_if_done(std::uint32_t job) {
  Job& j = jobs_[job];
  if (j.live > 0 || j.in_chain || flows_[j.flow].tail_job == job) return;
  unmark_ready(job);
  if (!j.key.empty()) {
    auto it = job_by_key_.find(j.key);
    if (it != job_by_key_.end() && it->second == job) job_by_key_.erase(it);
  }
  if (lane_on() && !options_.lane_work) note_job_work(j.submitted);
  TaskFifo storage = std::move(j.queued);
  storage.clear();
  j = Job{};
  j.queued = std::move(storage);
  free_jobs_.push_back(job);
}

void VirtualFairQueue::on_ready(const TaskSpec& task, TimePoint now) {
  advance(now);
  double work = options_.estimator->task_work(task);
  std::uint32_t f = flow_for(task);
  std::uint32_t job = kind_ == FlowKind::user ? on_ready_user(task, f, work) : kNone;
  Flow& flow = flows_[f];
  if (kind_ == FlowKind::job && !task.job.empty()) {
    auto it = job_by_key_.find(task.job);
    // More work for the flow's last job while the flow is still busy: the job grows.
    if (it != job_by_key_.end() && jobs_[it->second].flow == f && flow.tail_job == it->second &&
        flow.state == FlowState::active) {
      job = it->second;
      set_job_deadline(job, jobs_[job].deadline + work / flow.weight);
      set_flow_end(f, jobs_[job].deadline);
    }
  }
  if (job == kNone) {
    double start;
    if (flow.state != FlowState::idle) {
      start = flow.end;  // chains; a lingering flow back within its grace keeps its place
    } else {
      start = v_;
      flow.start = v_;
    }
    std::uint32_t old_tail = flow.tail_job;
    job = new_job(f, task.job);
    jobs_[job].deadline = start + work / flow.weight;
    flows_[f].tail_job = job;
    set_flow_end(f, jobs_[job].deadline);
    if (old_tail != kNone) release_job_if_done(old_tail);
  }
  Job& j = jobs_[job];
  j.submitted += work;
  j.queued.push_back(task.id);
  ++j.live;
  mark_ready(job);
  if (task.id >= job_of_task_.size()) {
    job_of_task_.resize(std::max<std::size_t>(task.id + 1, job_of_task_.size() * 2), kNone);
  }
  job_of_task_[task.id] = job;
  ++size_;
}

// uwfq: places the task's work in the user's own fair-queuing system and on its chain; returns
// the job the task joins.
std::uint32_t VirtualFairQueue::on_ready_user(const TaskSpec& task, std::uint32_t f, double work) {
  advance_chain(f);
  settle_chain(f);
  if (!task.job.empty()) {
    auto it = job_by_key_.find(task.job);
    if (it != job_by_key_.end() && jobs_[it->second].flow == f && jobs_[it->second].in_chain) {
      // The job is still unfinished in the user's system: it grows and may move back.
      std::uint32_t job = it->second;
      Job& j = jobs_[job];
      ChainKey old{j.ud, j.seq, job};
      chains_[f].erase(old);
      j.work += work;
      j.ud += work / j.weight;
      chains_[f].insert(ChainKey{j.ud, j.seq, job}, j.work);   // it only moves back
      if (j.in_ready) flows_[f].ready.push(ready_entry(job));  // the old entry is stale now
      chain_changed(f, old);
      return job;
    }
  }
  Flow& flow = flows_[f];
  if (flow.state == FlowState::idle) {
    flow.start = v_;
    flow.base = v_;
  } else if (flow.state == FlowState::lingering) {
    flow.base = flow.end;  // back within its grace: the chain continues from E_u
  }
  if (chains_[f].empty()) {
    flow.u = 0;
    flow.chain_weight = 0;
    flow.served_v = flow.base;
    flow.settled_key = 0;
    ++flow.chain_gen;  // U restarts: the earlier chain's jobs all come first
  }
  std::uint32_t old_tail = flow.tail_job;
  std::uint32_t job = new_job(f, task.job);
  Job& j = jobs_[job];
  if (!task.job.empty()) {
    auto w = options_.job_weights.find(task.job);
    if (w != options_.job_weights.end()) j.weight = w->second;
  }
  j.work = work;
  j.ud = flow.u + work / j.weight;
  j.chain_gen = flow.chain_gen;
  j.in_chain = true;
  flow.chain_weight += j.weight;
  flow.tail_job = kNone;
  chains_[f].insert(ChainKey{j.ud, j.seq, job}, work);
  chain_changed(f, ChainKey{j.ud, j.seq, job});
  if (old_tail != kNone) release_job_if_done(old_tail);
  return job;
}

// Runs the user's own system up to V: the user received w_u · (V − served_v) of service, shared
// by its chain jobs by weight; jobs whose user-virtual deadline U reaches leave the chain.
void VirtualFairQueue::advance_chain(std::uint32_t f) {
  Flow& flow = flows_[f];
  ChainTree& chain = chains_[f];
  if (chain.empty()) return;
  if (flow.state != FlowState::active) {
    clear_chain(f);  // V is past E_u: all of the user's work is done in the virtual system
    return;
  }
  double service = flow.weight * std::max(0.0, v_ - flow.served_v);
  flow.served_v = std::max(flow.served_v, v_);
  while (!chain.empty()) {
    std::uint32_t job = chain.front().job;
    Job& j = jobs_[job];
    double need = (j.ud - flow.u) * flow.chain_weight;
    if (need > service) {
      flow.u += service / flow.chain_weight;
      return;
    }
    service -= need;
    flow.u = j.ud;
    // The chain's first job: its deadline is base + its own work, and stays so (frozen).
    j.deadline = flow.base + j.work / flow.weight;
    flow.base = j.deadline;
    flow.chain_weight -= j.weight;
    chain.pop_front();
    j.in_chain = false;  // its entry stays valid: see ReadyEntry
    release_job_if_done(job);
  }
  flow.chain_weight = 0;  // drop accumulated rounding
}

// The service the user's chain received in the virtual system since its base, (V - base) · w_u,
// credited to its jobs in chain order, as if the user had run them one after another (the order
// its deadlines assume): the jobs it covers leave the chain with the deadlines they had (all at
// most V), the first one left is shortened by the rest, and base becomes V. No deadline moves and
// E_u stays; what changes is where a job arriving now is anchored. Without this, a user active
// for long with several jobs in its chain (served side by side in its own system, so none leaves
// it) keeps a base far behind V, and its next short job, overtaking them, gets base + R_j / w_u,
// a deadline far in the past that comes before every other user's new job (measured on the zipf
// mix: the head user's new jobs arrived up to 300 units of V overdue;
// docs/uwfq-beyond-the-paper.md). Amortised O(log k): a job leaves at most once; one entry is
// shortened per call.
void VirtualFairQueue::settle_chain(std::uint32_t f) {
  Flow& flow = flows_[f];
  ChainTree& chain = chains_[f];
  if (flow.state != FlowState::active || chain.empty()) return;
  double credit = (v_ - flow.base) * flow.weight;
  if (!(credit > 0)) return;
  while (!chain.empty()) {
    const ChainKey k = chain.front();
    Job& j = jobs_[k.job];
    if (j.work > credit) {
      chain.erase(k);
      j.work -= credit;
      chain.insert(k, j.work);
      flow.base = v_;
      break;
    }
    credit -= j.work;
    j.deadline = flow.base + j.work / flow.weight;
    flow.base = j.deadline;
    flow.chain_weight -= j.weight;
    chain.pop_front();
    j.in_chain = false;
    // Its user-virtual deadline was still ahead of U: re-keyed just above U and the jobs
    // settled before it (ReadyEntry), so it keeps its place in the chain's order and a job
    // arriving later (at U + R / w_j, with a later deadline) cannot sort before it.
    flow.settled_key =
        std::nextafter(std::max(flow.u, flow.settled_key), std::numeric_limits<double>::infinity());
    j.ud = flow.settled_key;
    if (j.in_ready) flow.ready.push(ready_entry(k.job));  // the old entry is stale now
    release_job_if_done(k.job);
  }
  if (chain.empty()) flow.chain_weight = 0;
  flow.best_dirty = true;  // the best job's deadline is the same, up to its last bits
  refresh_ready(f);
}

void VirtualFairQueue::clear_chain(std::uint32_t f) {
  if (kind_ != FlowKind::user) return;  // cfq flows have no chain
  Flow& flow = flows_[f];
  ChainTree& chain = chains_[f];
  if (chain.empty()) return;
  // Freeze every chain job's deadline as the chain goes; O(its jobs), each paid for by its
  // insertion. (Releasing a job does not touch the chain, so the walk can do it too.)
  double prefix = 0;
  chain.for_each([&](const ChainKey& k, double work) {
    prefix += work;
    Job& j = jobs_[k.job];
    j.deadline = flow.base + prefix / flow.weight;
    j.in_chain = false;  // its entry stays valid: see ReadyEntry
    release_job_if_done(k.job);
  });
  chain.clear();
  flow.base = flow.end;
  flow.chain_weight = 0;
  flow.best_dirty = true;  // the best job's deadline may differ in its last bits
  refresh_ready(f);
}

// The chain gained, lost or changed a job at `at`: every deadline from there on moved, and so
// did E_u. Only the flow's best queued job's deadline is published anywhere; it moved if that job
// is on the chain at or after `at` (jobs that left the chain keep theirs).
void VirtualFairQueue::chain_changed(std::uint32_t f, const ChainKey& at) {
  Flow& flow = flows_[f];
  if (flow.published) {
    const Job& best = jobs_[flow.best_job];
    if (best.in_chain && !(ChainKey{best.ud, best.seq, flow.best_job} < at)) {
      flow.best_dirty = true;
    }
  }
  refresh_ready(f);
  set_flow_end(f, flow.base + chains_[f].total_work() / flow.weight);
}

std::optional<TaskId> VirtualFairQueue::next(const ClusterView& cluster) {
  if (capacity_ <= 0) {
    int cores = 0;
    for (const auto& n : cluster.nodes) cores += n.info ? n.info->capacity.cores : 0;
    capacity_ = cores;
  }
  advance(cluster.now);
  // The smallest (deadline, seq) over all queued jobs is the smallest over the flows' best jobs.
  // With the lane holding long jobs back, the first flow whose best job is short: the flows
  // passed over are set aside and put back (at most kLaneScan of them; a decision with the
  // cluster nearly full, so rare). A flow's later jobs are not looked at: a user's short job
  // comes before its own long ones in its chain anyway. A flow whose front task was passed over
  // in this dispatch pass (pass_over) is set aside the same way.
  std::optional<TaskId> found;
  lane_passed_.clear();
  while (!ready_flows_.empty()) {
    const FlowReadyEntry top = ready_flows_.top();
    if (!flow_ready_valid(top)) {
      ready_flows_.pop();
      continue;
    }
    std::uint32_t job = flows_[top.flow].ready.top().job;
    Job& j = jobs_[job];
    while (!j.queued.empty() && job_of_task_[j.queued.front()] != job) j.queued.pop_front();
    if (j.queued.empty()) {
      unmark_ready(job);  // republishes the flow (or withdraws it): `top` is stale now
      continue;
    }
    const bool passed = !passed_.empty() && passed_.contains(j.queued.front());
    if (!passed && (!lane_on() || !holds_back(j))) {
      found = j.queued.front();
      break;
    }
    if (lane_passed_.size() == kLaneScan) break;
    lane_passed_.push_back(top);
    ready_flows_.pop();
  }
  for (const FlowReadyEntry& e : lane_passed_) ready_flows_.push(e);
  return found;
}

void VirtualFairQueue::on_start(const TaskSpec& task, TimePoint now) {
  advance(now);
  if (lane_on() && task.id < job_of_task_.size() && job_of_task_[task.id] != kNone) {
    if (options_.lane_auto) size_lane(now);
    if (task.id >= running_.size()) {
      running_.resize(std::max<std::size_t>(task.id + 1, running_.size() * 2), Running{});
    }
    // Services count as held cores but never as long work: they end only when the work that
    // uses them has, so long cores they held would keep long tasks out for good.
    const auto cores = static_cast<float>(task.total().cores);
    const bool is_long =
        task.kind != TaskKind::service && jobs_[job_of_task_[task.id]].submitted > lane_cutoff_;
    const bool is_short = task.kind != TaskKind::service && !is_long;
    running_[task.id] = Running{cores, is_long, is_short};
    running_cores_ += cores;
    if (is_long) long_cores_ += cores;
    if (is_short) short_cores_ += cores;
  }
  remove(task.id);
}

void VirtualFairQueue::on_finish(const TaskSpec& task, TaskState /*outcome*/, Duration ran_for,
                                 TimePoint now) {
  advance(now);
  options_.estimator->observe(task, ran_for);
  if (task.id < running_.size() && running_[task.id].cores > 0) {
    if (options_.lane_auto) size_lane(now);
    Running& r = running_[task.id];
    running_cores_ -= r.cores;
    if (r.is_long) long_cores_ -= r.cores;
    if (r.is_short) short_cores_ -= r.cores;
    r = Running{};
    // Sums of whole cores: no drift below one.
    if (running_cores_ < 0.5) running_cores_ = 0;
    if (long_cores_ < 0.5) long_cores_ = 0;
    if (short_cores_ < 0.5) short_cores_ = 0;
  }
}

// An exponential average over time of the cores short jobs held; twice that, so the lane is
// about half used by the demand it has seen and grows when short jobs fill it (they then hold
// all of it, the average rises). At most C / 16: under a high load, short jobs hold many cores
// on average, and a lane of C / 4 left long work too few (zipf on 8x4: small jobs 2.3x FAIR's,
// 0.79x at C / 16; docs/uwfq-beyond-the-paper.md finding 7). Called before short_cores_
// changes, so each interval is weighed with the value it had.
void VirtualFairQueue::size_lane(TimePoint now) {
  const double t = seconds_since_epoch(now);
  if (t > short_avg_at_) {
    const double a = 1 - std::exp(-(t - short_avg_at_) / kLaneTau_s);
    short_avg_ += a * (short_cores_ - short_avg_);
    short_avg_at_ = t;
  }
  const int most = std::max(1, static_cast<int>(capacity_ / 16));
  lane_width_ = std::clamp(static_cast<int>(std::ceil(2 * short_avg_)), 1, most);
}

// The cutoff is recomputed every 16 jobs (a sum over at most kLaneWindow values): it moves
// slowly, and a job leaves the queue far less often than a task is dispatched.
void VirtualFairQueue::note_job_work(double work) {
  if (lane_window_.size() < kLaneWindow) {
    lane_window_.push_back(work);
  } else {
    lane_window_[lane_next_] = work;
  }
  lane_next_ = (lane_next_ + 1) % kLaneWindow;
  if (++lane_since_ < 16 && lane_cutoff_ != std::numeric_limits<double>::infinity()) return;
  lane_since_ = 0;
  double sum = 0;
  for (double w : lane_window_) sum += w;
  lane_cutoff_ = sum / static_cast<double>(lane_window_.size());
}

void VirtualFairQueue::remove(TaskId task) {
  if (task >= job_of_task_.size() || job_of_task_[task] == kNone) return;
  std::uint32_t job = job_of_task_[task];
  job_of_task_[task] = kNone;
  --size_;
  Job& j = jobs_[job];
  --j.live;
  if (!j.queued.empty() && j.queued.front() == task) j.queued.pop_front();
  if (j.live == 0) {
    j.queued.clear();
    unmark_ready(job);
    std::uint32_t flow = j.flow;
    release_job_if_done(job);
    recycle_if_anonymous(flow);
  }
}

std::optional<double> VirtualFairQueue::deadline_of(TaskId task) const {
  if (task >= job_of_task_.size() || job_of_task_[task] == kNone) return std::nullopt;
  return job_deadline(job_of_task_[task]);
}

}  // namespace chorus
