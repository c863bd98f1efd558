#include "schedulers/queue/pool_queue.hpp"

#include <algorithm>
#include <cmath>

namespace chorus {

std::vector<OptionSpec> pool_option_specs() {
  return {{"weights", OptionKind::user_weights}};
}

PoolOptions pool_options(const PolicyArgs& args) {
  PoolOptions o;
  o.weights = args.user_weights("weights").value_or(std::map<std::string, double>{});
  return o;
}

Status PoolOptions::validate() const {
  for (const auto& [user, w] : weights) {
    if (!(w > 0) || !std::isfinite(w)) {
      return invalid_argument("weight of user '" + user + "' must be a positive number, got " +
                              std::to_string(w));
    }
  }
  for (const auto& [user, m] : min_shares) {
    if (m < 0) {
      return invalid_argument("minShare of user '" + user + "' must not be negative, got " +
                              std::to_string(m));
    }
  }
  return {};
}

PoolQueue::PoolQueue(WithinPool within, PoolOptions options)
    : within_(within), options_(std::move(options)) {}

PoolQueue::Key PoolQueue::pool_key(std::uint32_t pool) const {
  const Pool& p = pools_[pool];
  auto running = static_cast<double>(p.running);
  if (p.running < p.min_share) {
    return {0, running / std::max(p.min_share, 1), p.seq, pool};
  }
  return {1, running / p.weight, p.seq, pool};
}

PoolQueue::Key PoolQueue::job_key(std::uint32_t job) const {
  const Job& j = jobs_[job];
  double running = within_ == WithinPool::fair ? static_cast<double>(j.running) : 0.0;
  return {0, running, j.seq, job};
}

// Re-sorts a pool after its running cores or its queued jobs changed.
void PoolQueue::refresh_pool(std::uint32_t pool) {
  Pool& p = pools_[pool];
  if (p.in_set) ready_pools_.erase(p.key);
  p.in_set = !p.jobs.empty();
  if (p.in_set) {
    p.key = pool_key(pool);
    ready_pools_.insert(p.key);
  }
}

void PoolQueue::refresh_job(std::uint32_t job) {
  Job& j = jobs_[job];
  Pool& p = pools_[j.pool];
  if (j.in_set) p.jobs.erase(j.key);
  j.in_set = j.live > 0;
  if (j.in_set) {
    j.key = job_key(job);
    p.jobs.insert(j.key);
  }
}

std::uint32_t PoolQueue::pool_for(const std::string& user) {
  auto it = pool_by_user_.find(user);
  if (it != pool_by_user_.end()) return it->second;
  Pool p;
  if (auto w = options_.weights.find(user); w != options_.weights.end()) p.weight = w->second;
  if (auto m = options_.min_shares.find(user); m != options_.min_shares.end()) {
    p.min_share = m->second;
  }
  p.seq = next_seq_++;
  pools_.push_back(std::move(p));
  auto id = static_cast<std::uint32_t>(pools_.size() - 1);
  pool_by_user_.emplace(user, id);
  return id;
}

std::uint32_t PoolQueue::job_for(const TaskSpec& task, std::uint32_t pool) {
  if (!task.job.empty()) {
    auto it = job_by_name_.find(task.job);
    if (it != job_by_name_.end() && jobs_[it->second].pool == pool) return it->second;
  }
  std::uint32_t id;
  if (!free_jobs_.empty()) {
    id = free_jobs_.back();
    free_jobs_.pop_back();  // reset by release_job_if_idle
  } else {
    jobs_.emplace_back();
    id = static_cast<std::uint32_t>(jobs_.size() - 1);
  }
  Job& j = jobs_[id];
  j.pool = pool;
  j.seq = next_seq_++;
  j.name = task.job;
  if (!j.name.empty()) job_by_name_[j.name] = id;
  return id;
}

void PoolQueue::release_job_if_idle(std::uint32_t job) {
  Job& j = jobs_[job];
  if (j.live > 0 || j.started > 0) return;
  if (j.in_set) {
    pools_[j.pool].jobs.erase(j.key);
    j.in_set = false;
    refresh_pool(j.pool);
  }
  if (!j.name.empty()) {
    auto it = job_by_name_.find(j.name);
    if (it != job_by_name_.end() && it->second == job) job_by_name_.erase(it);
  }
  TaskFifo storage = std::move(j.queued);
  storage.clear();
  j = Job{};
  j.queued = std::move(storage);
  free_jobs_.push_back(job);
}

void PoolQueue::ensure_task(TaskId task) {
  if (task < job_of_task_.size()) return;
  std::size_t n = std::max<std::size_t>(task + 1, job_of_task_.size() * 2);
  job_of_task_.resize(n, kNone);
  queued_.resize(n, 0);
}

void PoolQueue::on_ready(const TaskSpec& task, TimePoint /*now*/) {
  ensure_task(task.id);
  std::uint32_t pool = pool_for(task.user);
  std::uint32_t job = job_for(task, pool);
  Job& j = jobs_[job];
  j.queued.push_back(task.id);
  ++j.live;
  job_of_task_[task.id] = job;
  queued_[task.id] = 1;
  ++size_;
  if (!j.in_set) {
    refresh_job(job);
    refresh_pool(pool);
  }
}

bool PoolQueue::drop_stale_front(std::uint32_t job) {
  Job& j = jobs_[job];
  while (!j.queued.empty() &&
         (!queued_[j.queued.front()] || job_of_task_[j.queued.front()] != job)) {
    j.queued.pop_front();
  }
  return !j.queued.empty();
}

std::optional<TaskId> PoolQueue::next(const ClusterView& /*cluster*/) {
  if (!passed_.empty()) {
    // Pools in order, past those whose front task was passed over (their later tasks come
    // after it anyway). Only the lazy pops of started or removed tasks here: the sets stay.
    for (const Key& key : ready_pools_) {
      const std::uint32_t job = std::get<3>(*pools_[std::get<3>(key)].jobs.begin());
      if (!drop_stale_front(job)) continue;
      const TaskId t = jobs_[job].queued.front();
      if (!passed_.contains(t)) return t;
    }
    return std::nullopt;
  }
  while (!ready_pools_.empty()) {
    std::uint32_t pool = std::get<3>(*ready_pools_.begin());
    std::uint32_t job = std::get<3>(*pools_[pool].jobs.begin());
    if (drop_stale_front(job)) return jobs_[job].queued.front();
    // Only removed tasks were left: cannot happen while live > 0, kept for safety.
    jobs_[job].live = 0;
    refresh_job(job);
    refresh_pool(pool);
  }
  return std::nullopt;
}

void PoolQueue::on_start(const TaskSpec& task, TimePoint /*now*/) {
  if (task.id >= queued_.size() || !queued_[task.id]) return;
  std::uint32_t job = job_of_task_[task.id];
  jobs_[job].started += 1;  // before remove(), which would release an idle job
  remove(task.id);
  job_of_task_[task.id] = job;  // still ours until it finishes
  Job& j = jobs_[job];
  j.running += std::max(1, task.total().cores);
  pools_[j.pool].running += std::max(1, task.total().cores);
  if (j.in_set) refresh_job(job);
  refresh_pool(j.pool);
}

void PoolQueue::on_finish(const TaskSpec& task, TaskState /*outcome*/, Duration /*ran_for*/,
                          TimePoint /*now*/) {
  if (task.id >= job_of_task_.size() || queued_[task.id]) return;
  std::uint32_t job = job_of_task_[task.id];
  if (job == kNone) return;
  job_of_task_[task.id] = kNone;
  Job& j = jobs_[job];
  if (j.started == 0) return;  // finished without having started here (cancelled while queued)
  j.started -= 1;
  j.running -= std::max(1, task.total().cores);
  pools_[j.pool].running -= std::max(1, task.total().cores);
  if (j.in_set) refresh_job(job);
  refresh_pool(j.pool);
  release_job_if_idle(job);
}

void PoolQueue::remove(TaskId task) {
  if (task >= queued_.size() || !queued_[task]) return;
  std::uint32_t job = job_of_task_[task];
  queued_[task] = 0;
  job_of_task_[task] = kNone;
  --size_;
  Job& j = jobs_[job];
  --j.live;
  if (!j.queued.empty() && j.queued.front() == task) j.queued.pop_front();
  if (j.live == 0) {
    j.queued.clear();
    refresh_job(job);
    refresh_pool(j.pool);
    release_job_if_idle(job);
  }
}

}  // namespace chorus
