#include "schedulers/queue/work_estimator.hpp"

#include <algorithm>
#include <chrono>

namespace chorus {
namespace {

double seconds_of(Duration d) {
  return std::chrono::duration<double>(d).count();
}
int cores_of(const TaskSpec& task) {
  return std::max(1, task.total().cores);
}

}  // namespace

std::string job_class_of(const TaskSpec& task) {
  if (!task.job.empty()) return task.job;
  auto bracket = task.name.find('[');
  return bracket == std::string::npos ? task.name : task.name.substr(0, bracket);
}

double DeclaredWork::task_work(const TaskSpec& task) const {
  Duration d = task.estimate > Duration::zero() ? task.estimate : fallback_;
  // A zero fallback would give zero-length virtual jobs, which never leave the virtual system
  // behind; a nanosecond keeps the arithmetic well defined.
  return std::max(seconds_of(d), 1e-9) * cores_of(task);
}

double HistoryWork::task_work(const TaskSpec& task) const {
  auto it = by_class_.find(job_class_of(task));
  if (it == by_class_.end() || it->second.count == 0) return declared_.task_work(task);
  return std::max(it->second.sum / static_cast<double>(it->second.count), 1e-9) * cores_of(task);
}

void HistoryWork::observe(const TaskSpec& task, Duration ran_for) {
  add_sample(job_class_of(task), seconds_of(ran_for));
}

void HistoryWork::add_sample(const std::string& job_class, double seconds) {
  if (!(seconds >= 0)) return;
  auto& m = by_class_[job_class];
  m.sum += seconds;
  ++m.count;
}

}  // namespace chorus
