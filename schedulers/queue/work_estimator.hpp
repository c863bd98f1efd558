// WorkEstimator: how fair-queuing policies (cfq, uwfq) learn the work R of a task, in
// core-seconds, before it runs. Three sources: what the user declared (TaskSpec::estimate), the
// mean of past runs of the same job class (HistoryWork, seeded from the journal by the caller and
// updated from finished attempts), or the truth (the simulator sets estimate to the real runtime,
// which makes DeclaredWork an oracle there).
//
// Contract: pure, no I/O; task_work() always returns a positive, finite number.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/task_spec.hpp"
#include "core/task_state.hpp"
#include "core/units.hpp"

namespace chorus {

class WorkEstimator {
 public:
  virtual ~WorkEstimator() = default;
  // Expected work of one task in core-seconds (> 0).
  virtual double task_work(const TaskSpec& task) const = 0;
  // Every finished attempt, with how long it ran; estimators that learn use it.
  virtual void observe(const TaskSpec& /*task*/, Duration /*ran_for*/) {}
};

// The key that groups runs of "the same job": TaskSpec::job when set, else the task name without
// its sweep suffix ("train[lr=0.1]" -> "train").
std::string job_class_of(const TaskSpec& task);

// One journaled transition of a past task, as the history needs it (the caller converts the
// journal's records; schedulers/ does not read it).
struct JournalEvent {
  std::string task_name;
  std::uint32_t attempt = 0;
  TaskState state = TaskState::pending;
  double time = 0;  // seconds
};

// Runtime samples (job class, seconds) of the attempts of one run that went from running to
// succeeded. A task named like one of `current` takes that task's class (job_class_of, so its
// `job:` counts); others their name without the sweep suffix.
std::vector<std::pair<std::string, double>> history_samples(std::span<const JournalEvent> events,
                                                            std::span<const TaskSpec> current);

// estimate × cores; a task without an estimate counts as `fallback` seconds.
class DeclaredWork : public WorkEstimator {
 public:
  explicit DeclaredWork(Duration fallback = std::chrono::seconds(1)) : fallback_(fallback) {}
  double task_work(const TaskSpec& task) const override;

 private:
  Duration fallback_;
};

// The mean runtime of past runs of the task's job class × cores; classes never seen fall back to
// the declared estimate (then to `fallback`).
class HistoryWork : public WorkEstimator {
 public:
  explicit HistoryWork(Duration fallback = std::chrono::seconds(1)) : declared_(fallback) {}
  double task_work(const TaskSpec& task) const override;
  void observe(const TaskSpec& task, Duration ran_for) override;
  // Seeds the history, e.g. from runs recorded in the journal.
  void add_sample(const std::string& job_class, double seconds);
  // The mean runtime seen for `job_class` (no cores, no fallback); nullopt when never seen.
  std::optional<double> mean_seconds(const std::string& job_class) const;

 private:
  struct Mean {
    double sum = 0;
    long count = 0;
  };
  DeclaredWork declared_;
  std::unordered_map<std::string, Mean> by_class_;
};

}  // namespace chorus
