#include "schedulers/sim/workload.hpp"

#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace chorus::sim {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

const char* to_string(SizeClass c) {
  switch (c) {
    case SizeClass::small:
      return "small";
    case SizeClass::large:
      return "large";
    case SizeClass::unknown:
      break;
  }
  return "unknown";
}

double SimJob::work() const {
  double w = 0;
  for (const auto& t : tasks) w += t.runtime_s * t.cores;
  return w;
}

std::size_t Workload::task_count() const {
  std::size_t n = 0;
  for (const auto& j : jobs) n += j.tasks.size();
  return n;
}

Status validate_workload(const Workload& w) {
  std::unordered_set<std::string> ids;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const SimJob& j = w.jobs[i];
    std::string where = "job '" + j.id + "'";
    if (j.id.empty()) return invalid_argument("job #" + std::to_string(i + 1) + " has no id");
    if (!ids.insert(j.id).second) return invalid_argument("duplicate job id '" + j.id + "'");
    if (!std::isfinite(j.arrival_s) || j.arrival_s < 0) {
      return invalid_argument(where + " arrives at " + seconds_text(j.arrival_s) +
                              " s, before time 0 (arrivals are seconds from the start, >= 0)");
    }
    if (!(j.weight > 0) || !std::isfinite(j.weight)) {
      return invalid_argument(where + " has weight " + std::to_string(j.weight) +
                              "; a job's weight must be a positive number");
    }
    if (j.tasks.empty()) return invalid_argument(where + " has no tasks");
    for (std::size_t k = 0; k < j.tasks.size(); ++k) {
      const SimTask& t = j.tasks[k];
      std::string task = where + " task " + std::to_string(k);
      if (!(t.runtime_s > 0) || !std::isfinite(t.runtime_s)) {
        return invalid_argument(task + " has no runtime (need a positive number of seconds)");
      }
      if (t.cores <= 0)
        return invalid_argument(task + " asks for " + std::to_string(t.cores) + " cores");
      for (auto a : t.after) {
        if (a >= k) {
          return invalid_argument(task + " waits for task " + std::to_string(a) +
                                  ", which is not an earlier task of the job");
        }
      }
    }
  }
  return {};
}

}  // namespace chorus::sim
