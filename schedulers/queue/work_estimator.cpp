#include "schedulers/queue/work_estimator.hpp"

#include <algorithm>
#include <chrono>
#include <string_view>

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
  auto mean = mean_seconds(job_class_of(task));
  if (!mean) return declared_.task_work(task);
  return std::max(*mean, 1e-9) * cores_of(task);
}

std::optional<double> HistoryWork::mean_seconds(const std::string& job_class) const {
  auto it = by_class_.find(job_class);
  if (it == by_class_.end() || it->second.count == 0) return std::nullopt;
  return it->second.sum / static_cast<double>(it->second.count);
}

void HistoryWork::observe(const TaskSpec& task, Duration ran_for) {
  add_sample(job_class_of(task), seconds_of(ran_for));
}

std::vector<std::pair<std::string, double>> history_samples(std::span<const JournalEvent> events,
                                                            std::span<const TaskSpec> current) {
  std::unordered_map<std::string_view, const TaskSpec*> by_name;
  for (const TaskSpec& t : current) by_name.emplace(t.name, &t);
  // Start of each attempt by (task name, attempt).
  std::unordered_map<std::string, double> started;
  auto key = [](const JournalEvent& e) { return e.task_name + '\0' + std::to_string(e.attempt); };
  std::vector<std::pair<std::string, double>> out;
  for (const JournalEvent& e : events) {
    if (e.state == TaskState::running) {
      started[key(e)] = e.time;
    } else if (e.state == TaskState::succeeded) {
      auto s = started.find(key(e));
      if (s == started.end() || !(e.time >= s->second)) continue;
      auto t = by_name.find(e.task_name);
      std::string cls;
      if (t != by_name.end()) {
        cls = job_class_of(*t->second);
      } else {
        TaskSpec past;
        past.name = e.task_name;
        cls = job_class_of(past);
      }
      out.emplace_back(std::move(cls), e.time - s->second);
      started.erase(s);
    }
  }
  return out;
}

void HistoryWork::add_sample(const std::string& job_class, double seconds) {
  if (!(seconds >= 0)) return;
  auto& m = by_class_[job_class];
  m.sum += seconds;
  ++m.count;
}

}  // namespace chorus
