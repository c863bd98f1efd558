#include "adapters/inproc/inproc_launcher.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <iterator>
#include <utility>

#include "core/thread_guard.hpp"
#include "core/units.hpp"

namespace chorus {
namespace {

// A worker hands its finished tasks over at the end of its batch, or sooner once this much time
// has passed since its last hand-over, so one slow function does not hold back earlier results.
constexpr auto kMaxHoldBack = std::chrono::microseconds(200);
constexpr std::size_t kMaxBatch = 64;

}  // namespace

InprocLauncher::InprocLauncher(unsigned threads) {
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) {
    init_error_ =
        io_error(std::string("in-process launcher cannot start: eventfd: ") + std::strerror(errno));
  }
  thread_count_ = std::max(threads, 1U);
  workers_.reserve(thread_count_);
  for (unsigned i = 0; i < thread_count_; ++i)
    workers_.emplace_back([this] { run_guarded("in-process worker", [this] { worker_loop(); }); });
}

InprocLauncher::~InprocLauncher() {
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  stop_now_.store(true, std::memory_order_relaxed);
  queue_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (event_fd_ >= 0) ::close(event_fd_);
}

namespace {
thread_local const KeyValues* t_task_env = nullptr;
}  // namespace

std::optional<std::string> current_task_env(std::string_view key) {
  if (t_task_env == nullptr) return std::nullopt;
  for (const auto& [k, v] : *t_task_env) {
    if (k == key) return v;
  }
  return std::nullopt;
}

Result<LaunchHandle> InprocLauncher::launch(const LaunchRequest& request) {
  if (request.run_as != nullptr) {
    return invalid_argument("this site runs tasks as the coordinator's own user only, not as " +
                            request.run_as->name);
  }
  if (!init_error_.ok()) return init_error_;
  if (request.spec == nullptr) return invalid_argument("launch request without a task spec");
  if (!request.spec->fn) {
    return invalid_argument("task '" + request.spec->name +
                            "' has no function to run (the in-process launcher runs function "
                            "tasks only)");
  }
  LaunchHandle handle = next_handle_++;
  bool wake;
  {
    std::lock_guard lock(queue_mu_);
    queue_.push_back(Job{request.spec, request.attempt, handle,
                         request.spec->uses.empty() ? KeyValues{} : request.env});
    wake = idle_ > 0;
  }
  if (wake) queue_cv_.notify_one();
  window_.push_back(1);
  ++in_flight_;
  return handle;
}

void InprocLauncher::worker_loop() {
  std::vector<Job> batch;
  std::vector<Done> finished;
  batch.reserve(kMaxBatch);
  finished.reserve(kMaxBatch);
  std::unique_lock lock(queue_mu_);
  for (;;) {
    while (queue_.empty() && !stopping_) {
      ++idle_;
      queue_cv_.wait(lock);
      --idle_;
    }
    if (stopping_) return;
    // A fair share of what is queued, so the other workers are not left idle behind one batch.
    std::size_t take = std::clamp<std::size_t>(queue_.size() / thread_count_, 1, kMaxBatch);
    auto end = queue_.begin() + static_cast<std::ptrdiff_t>(take);
    batch.assign(queue_.begin(), end);
    queue_.erase(queue_.begin(), end);
    lock.unlock();

    auto last_handover = Clock::now();
    for (const Job& job : batch) {
      if (stop_now_.load(std::memory_order_relaxed)) break;
      if (job.spec == nullptr) continue;  // cancelled while queued; already reported
      finished.push_back(run(job));
      auto now = Clock::now();
      if (now - last_handover > kMaxHoldBack) {
        publish(finished);
        last_handover = now;
      }
    }
    if (!finished.empty()) publish(finished);
    batch.clear();
    lock.lock();
  }
}

bool InprocLauncher::cancel_requested(LaunchHandle handle) {
  if (cancelled_count_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(queue_mu_);
  return cancelled_.count(handle) != 0;
}

InprocLauncher::Done InprocLauncher::run(const Job& job) {
  const TaskSpec& spec = *job.spec;
  Done done{job.handle, {}};
  StateUpdate& u = done.update;
  u.task = spec.id;
  u.attempt = job.attempt;
  if (cancel_requested(job.handle)) {
    u.kind = UpdateKind::cancelled;
    u.message = "cancelled before it started";
    u.end_time = wall_seconds_now();
    return done;
  }

  bool timed = spec.timeout > Duration::zero();
  TimePoint start = timed ? Clock::now() : TimePoint{};
  struct EnvScope {
    explicit EnvScope(const KeyValues* env) { t_task_env = env; }
    ~EnvScope() { t_task_env = nullptr; }
  } env_scope(job.env.empty() ? nullptr : &job.env);
  try {
    Status status = spec.fn();
    if (!status.ok()) {
      u.exit_code = 1;
      u.message = status.message().empty() ? to_string(status.code()) : status.message();
    }
  } catch (const std::exception& e) {
    u.exit_code = 1;
    u.message = std::string("exception: ") + e.what();
  } catch (...) {
    u.exit_code = 1;
    u.message = "exception: of a type not derived from std::exception";
  }

  if (cancel_requested(job.handle)) {
    u.kind = UpdateKind::cancelled;
    std::string outcome = u.message.empty() ? "it succeeded" : u.message;
    u.message =
        "cancelled while running (a running function cannot be interrupted; it ran to "
        "the end: " +
        outcome + ")";
  } else if (timed) {
    Duration ran = Clock::now() - start;
    if (ran > spec.timeout) {
      u.kind = UpdateKind::timed_out;
      u.message = "timed out after " + format_duration(spec.timeout) + " (a function cannot be " +
                  "interrupted; it returned after " + format_duration(ran) + ")";
    }
  }
  u.end_time = wall_seconds_now();
  return done;
}

void InprocLauncher::publish(std::vector<Done>& batch) {
  {
    std::lock_guard lock(done_mu_);
    bool was_empty = done_.empty();
    done_.insert(done_.end(), std::make_move_iterator(batch.begin()),
                 std::make_move_iterator(batch.end()));
    if (was_empty) {
      // Written under the lock so that "signalled" always means "done_ is not empty".
      std::uint64_t one = 1;
      (void)!::write(event_fd_, &one, sizeof one);
    }
  }
  batch.clear();
}

void InprocLauncher::poll(std::vector<StateUpdate>& out) {
  {
    std::lock_guard lock(done_mu_);
    if (done_.empty()) return;
    done_.swap(polled_);
    std::uint64_t count;
    (void)!::read(event_fd_, &count, sizeof count);
  }
  out.reserve(out.size() + polled_.size());
  for (Done& d : polled_) {
    out.push_back(std::move(d.update));
    window_[d.handle - window_base_] = 0;
  }
  in_flight_ -= polled_.size();
  if (cancelled_count_.load(std::memory_order_relaxed) != 0) {
    std::lock_guard lock(queue_mu_);
    for (const Done& d : polled_) {
      if (cancelled_.erase(d.handle) != 0) cancelled_count_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  polled_.clear();
  while (!window_.empty() && window_.front() == 0) {
    window_.pop_front();
    ++window_base_;
  }
}

Status InprocLauncher::cancel(LaunchHandle handle) {
  if (handle < window_base_ || handle >= next_handle_ || window_[handle - window_base_] == 0) {
    return Status::ok_status();  // unknown, or its final update was already polled
  }
  std::vector<Done> report;
  {
    std::lock_guard lock(queue_mu_);
    auto it = std::lower_bound(queue_.begin(), queue_.end(), handle,
                               [](const Job& job, LaunchHandle h) { return job.handle < h; });
    if (it == queue_.end() || it->handle != handle) {
      // A worker has it: it is reported cancelled when it returns (or instead of starting).
      if (cancelled_.insert(handle).second) {
        cancelled_count_.fetch_add(1, std::memory_order_release);
      }
      return Status::ok_status();
    }
    if (it->spec == nullptr) return Status::ok_status();  // already cancelled
    StateUpdate u;
    u.task = it->spec->id;
    u.attempt = it->attempt;
    u.kind = UpdateKind::cancelled;
    u.message = "cancelled before it started";
    u.end_time = wall_seconds_now();
    it->spec = nullptr;
    report.push_back(Done{handle, std::move(u)});
  }
  publish(report);
  return Status::ok_status();
}

}  // namespace chorus
