// A launcher and a clock that do exactly what a test says, for driving the coordinator's logic
// through orders of events real processes make hard to produce (tests/runtime/
// test_coordinator_logic.cpp). Nothing runs: a launch is recorded, and a task ends when the test
// calls exit()/lose()/... and the coordinator next polls.
#pragma once

#include <doctest/doctest.h>

#include <deque>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "adapters/launcher.hpp"
#include "runtime/loop_clock.hpp"

namespace chorus::test {

// The loop's time stands still until the test moves it, or until the loop waits with nothing
// scripted (then it jumps to the wait's deadline). Each wait() runs the next scripted step.
class ManualClock final : public LoopClock {
 public:
  TimePoint now() override { return now_; }
  double wall_seconds() override {
    return 1.0e9 + std::chrono::duration<double>(now_ - TimePoint{}).count();
  }
  void wait(std::span<pollfd> /*fds*/, TimePoint deadline) override {
    ++waits_;
    if (every_wait_) every_wait_();
    if (!steps_.empty() && (!steps_.front().when || steps_.front().when())) {
      auto step = std::move(steps_.front().action);
      steps_.pop_front();
      step();
      return;
    }
    if (deadline > now_) now_ = deadline;
    // A coordinator that waits forever with the script stuck is a failing test, not a hang.
    if (++idle_ > 100000) throw std::runtime_error("the script is stuck and the run goes on");
  }

  void advance(Duration d) { now_ += d; }
  // Runs at the next wait() once the steps before it ran.
  void then(std::function<void()> step) { steps_.push_back({nullptr, std::move(step)}); }
  // Likewise, at the first such wait() at which `when` holds; until then time passes (each wait
  // jumps to its deadline).
  void then_when(std::function<bool()> when, std::function<void()> step) {
    steps_.push_back({std::move(when), std::move(step)});
  }
  // Runs at every wait(), before its step.
  void every_wait(std::function<void()> check) { every_wait_ = std::move(check); }
  bool script_done() const { return steps_.empty(); }
  int waits() const { return waits_; }

 private:
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
  struct Step {
    std::function<bool()> when;  // null: at once
    std::function<void()> action;
  };
  std::deque<Step> steps_;
  std::function<void()> every_wait_;
  int waits_ = 0;
  int idle_ = 0;
};

class ScriptedLauncher final : public Launcher {
 public:
  struct Launch {
    TaskId task = kNoTask;
    std::string name;
    std::uint32_t attempt = 0;
    std::string node;
    std::vector<NodeRanks> spread;
    KeyValues env;
    TimePoint at{};  // the clock's time of the launch
    LaunchHandle handle = 0;
  };

  explicit ScriptedLauncher(LoopClock& clock) : clock_(clock) {}

  std::string_view name() const override { return "scripted"; }

  Result<LaunchHandle> launch(const LaunchRequest& request) override {
    const std::string& task = request.spec->name;
    if (auto it = launch_failures_.find(task); it != launch_failures_.end()) {
      std::string why = std::move(it->second);
      launch_failures_.erase(it);
      return io_error(why);
    }
    Launch l{request.spec->id, task,        request.attempt, request.node,
             request.spread,   request.env, clock_.now(),    ++next_handle_};
    launches.push_back(l);
    live_[task] = l;
    return l.handle;
  }

  void poll(std::vector<StateUpdate>& out) override {
    for (auto& u : pending_) out.push_back(std::move(u));
    pending_.clear();
    ended_unpolled_ = 0;
  }

  Status cancel(LaunchHandle handle) override {
    for (auto& [task, l] : live_) {
      if (l.handle != handle) continue;
      cancels.push_back(task);
      if (cancel_ends_at_once) end(task, UpdateKind::cancelled, 0, 15, "");
      return {};
    }
    return {};
  }

  // Launched and whose final update was not polled yet.
  std::size_t in_flight() const override { return live_.size() + ended_unpolled_; }

  // ---- The script.

  // The next launch of `task` fails with `why` (as a launcher whose node just went away does).
  void fail_launch(const std::string& task, std::string why) {
    launch_failures_[task] = std::move(why);
  }
  // The latest attempt of `task` ends: exit status `code`.
  void exit(const std::string& task, int code = 0) { end(task, UpdateKind::exited, code, 0, ""); }
  // It ends as cancelled (what cancel() does at once unless cancel_ends_at_once is false).
  void end_cancelled(const std::string& task) { end(task, UpdateKind::cancelled, 0, 15, ""); }
  // The launcher lost it (its node or agent went away).
  void lose(const std::string& task) { end(task, UpdateKind::lost, 0, 0, ""); }
  // An update for an attempt the launcher no longer holds (a late or repeated report).
  void stale(TaskId task, std::uint32_t attempt, UpdateKind kind, int code = 0) {
    StateUpdate u;
    u.task = task;
    u.attempt = attempt;
    u.kind = kind;
    u.exit_code = code;
    pending_.push_back(u);
  }

  bool running(const std::string& task) const { return live_.count(task) != 0; }
  int attempts(const std::string& task) const {
    int n = 0;
    for (const auto& l : launches) n += l.name == task;
    return n;
  }
  const Launch& last(const std::string& task) const {
    for (auto it = launches.rbegin(); it != launches.rend(); ++it) {
      if (it->name == task) return *it;
    }
    FAIL("never launched: " << task);
    throw std::logic_error("unreachable");
  }

  std::vector<Launch> launches;
  std::vector<std::string> cancels;  // task names, in the order cancel() was called
  bool cancel_ends_at_once = true;   // cancel() ends the task (update kind cancelled) at once

 private:
  void end(const std::string& task, UpdateKind kind, int code, int signal, std::string message) {
    auto it = live_.find(task);
    REQUIRE_MESSAGE(it != live_.end(), "not running: " << task);
    StateUpdate u;
    u.task = it->second.task;
    u.attempt = it->second.attempt;
    u.kind = kind;
    u.exit_code = code;
    u.signal = signal;
    u.message = std::move(message);
    pending_.push_back(std::move(u));
    live_.erase(it);
    ++ended_unpolled_;
  }

  LoopClock& clock_;
  std::map<std::string, Launch> live_;
  std::map<std::string, std::string> launch_failures_;
  std::vector<StateUpdate> pending_;
  std::size_t ended_unpolled_ = 0;
  LaunchHandle next_handle_ = 0;
};

}  // namespace chorus::test
