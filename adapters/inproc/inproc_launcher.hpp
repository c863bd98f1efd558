// InprocLauncher: runs function tasks (TaskSpec::fn) on a fixed pool of threads in this process.
//
// Design assumptions:
// - Throughput first: launch() only enqueues {spec, attempt, handle} (the spec outlives the task,
//   so the std::function is never copied) under one mutex; workers take several queued tasks at
//   once; completions are collected in one vector and the eventfd behind wait_fd() is written only
//   when that vector goes from empty to non-empty, so a busy run costs no syscall per task.
// - A function cannot be interrupted. cancel() removes a task that has not started and reports it
//   cancelled at once; a task already running is reported cancelled when it returns. Likewise a
//   function is never killed for its timeout: if it ran longer than spec->timeout it is reported
//   timed_out when it returns.
// - A non-ok Status fails the task (exit_code 1, message = the status message); an exception
//   escaping the function fails it with "exception: <what()>". Exceptions never leave the worker.
//
// Threading: launch/poll/cancel/in_flight are called from one thread (the coordinator's); the
// functions run on the pool's threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/status.hpp"

namespace chorus {

// Inside a function task run by an InprocLauncher: the value of `key` in the environment the
// coordinator gave it (LaunchRequest::env), e.g. CHORUS_SERVICE_<NAME> for a task that uses a
// service; nullopt elsewhere or when absent. Only tasks that use services get an environment.
std::optional<std::string> current_task_env(std::string_view key);

class InprocLauncher final : public Launcher {
 public:
  // threads == 0 means one (hardware_concurrency() may report 0).
  explicit InprocLauncher(unsigned threads = std::thread::hardware_concurrency());
  // Stops accepting work, lets the functions already running return, joins the threads. Tasks
  // that never started are dropped without an update.
  ~InprocLauncher() override;

  InprocLauncher(const InprocLauncher&) = delete;
  InprocLauncher& operator=(const InprocLauncher&) = delete;

  std::string_view name() const override { return "inproc"; }

  // Errors: invalid_argument (no spec, or a spec without a function); io_error if the launcher
  // could not create its eventfd at construction.
  Result<LaunchHandle> launch(const LaunchRequest& request) override;
  void poll(std::vector<StateUpdate>& out) override;
  // Idempotent; see the class comment for what happens to a running function.
  Status cancel(LaunchHandle handle) override;
  int wait_fd() const override { return event_fd_; }
  std::size_t in_flight() const override { return in_flight_; }

  unsigned threads() const { return thread_count_; }

 private:
  struct Job {
    const TaskSpec* spec;  // nullptr once cancelled while still queued
    std::uint32_t attempt;
    LaunchHandle handle;
    KeyValues env;  // what current_task_env() answers; filled only for tasks that use services
  };
  struct Done {
    LaunchHandle handle;
    StateUpdate update;
  };

  void worker_loop();
  Done run(const Job& job);
  bool cancel_requested(LaunchHandle handle);
  // Appends under done_mu_; signals the eventfd on the empty -> non-empty transition.
  void publish(std::vector<Done>& batch);

  int event_fd_ = -1;
  Status init_error_;
  unsigned thread_count_ = 1;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Job> queue_;  // ordered by handle: launch order, popped from the front
  unsigned idle_ = 0;
  bool stopping_ = false;
  std::atomic<bool> stop_now_{false};
  // Handles cancelled after a worker took them (guarded by queue_mu_); the count lets workers
  // skip the lock in the common case of no cancellation at all.
  std::unordered_set<LaunchHandle> cancelled_;
  std::atomic<std::size_t> cancelled_count_{0};

  std::mutex done_mu_;
  std::vector<Done> done_;

  // Coordinator thread only.
  std::vector<Done> polled_;  // swapped with done_ so both keep their capacity
  LaunchHandle next_handle_ = 1;
  std::size_t in_flight_ = 0;
  // Whether each handle from window_base_ on still awaits its final update (1) or not (0), so
  // cancel() can tell a finished handle from a live one without a per-task map.
  std::deque<std::uint8_t> window_;
  LaunchHandle window_base_ = 1;

  std::vector<std::thread> workers_;
};

}  // namespace chorus
