#include "schedulers/sim/workload.hpp"

#include <cmath>
#include <cstdio>
#include <unordered_set>
#include <vector>

namespace chorus::sim {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Tasks that wait for other jobs' tasks: every job must arrive on its own (a closed-loop job
// arrives when its predecessor ends, which such a wait could prevent forever), and the waits
// together with each job's own must form no cycle (Kahn's algorithm over all tasks).
Status check_cross_job_order(const Workload& w) {
  bool crossing = false;
  bool closed_loop = false;
  std::vector<std::size_t> first(w.jobs.size() + 1, 0);
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    closed_loop = closed_loop || w.jobs[j].after_previous;
    for (const auto& t : w.jobs[j].tasks) crossing = crossing || !t.after_other.empty();
    first[j + 1] = first[j] + w.jobs[j].tasks.size();
  }
  if (!crossing) return {};
  if (closed_loop) {
    return invalid_argument(
        "tasks wait for other jobs' tasks in a workload with closed-loop (after_previous) jobs; "
        "give every job an arrival time");
  }
  const std::size_t n = first.back();
  std::vector<std::uint32_t> waiting(n, 0);
  std::vector<std::vector<std::size_t>> dependents(n);
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    for (std::size_t k = 0; k < w.jobs[j].tasks.size(); ++k) {
      const SimTask& t = w.jobs[j].tasks[k];
      waiting[first[j] + k] = static_cast<std::uint32_t>(t.after.size() + t.after_other.size());
      for (auto a : t.after) dependents[first[j] + a].push_back(first[j] + k);
      for (const TaskRef& r : t.after_other)
        dependents[first[r.job] + r.task].push_back(first[j] + k);
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t t = 0; t < n; ++t) {
    if (waiting[t] == 0) ready.push_back(t);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    std::size_t t = ready.back();
    ready.pop_back();
    ++done;
    for (auto d : dependents[t]) {
      if (--waiting[d] == 0) ready.push_back(d);
    }
  }
  if (done < n) {
    for (std::size_t j = 0; j < w.jobs.size(); ++j) {
      for (std::size_t k = 0; k < w.jobs[j].tasks.size(); ++k) {
        if (waiting[first[j] + k] > 0) {
          return invalid_argument("job '" + w.jobs[j].id + "' task " + std::to_string(k) +
                                  " waits, through other jobs' tasks, for itself (a cycle)");
        }
      }
    }
  }
  return {};
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
  for (const auto& t : tasks) w += t.runtime_s * static_cast<double>(task_cores(t));
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
    if (j.arrival_s > kMaxSimSeconds) {
      return invalid_argument(where + " arrives at " + seconds_text(j.arrival_s) +
                              " s, later than the limit of " + seconds_text(kMaxSimSeconds) + " s");
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
      if (t.runtime_s > kMaxSimSeconds) {
        return invalid_argument(task + " runs " + seconds_text(t.runtime_s) +
                                " s, more than the limit of " + seconds_text(kMaxSimSeconds) +
                                " s");
      }
      if (t.cores <= 0 || t.cores > kMaxSimCores)
        return invalid_argument(task + " asks for " + std::to_string(t.cores) + " cores");
      if (t.ranks < 0 || t.ranks > kMaxSimCores || t.nodes < 0 || t.nodes > kMaxSimCores) {
        return invalid_argument(task + " asks for " + std::to_string(t.ranks) + " ranks on " +
                                std::to_string(t.nodes) + " nodes");
      }
      if (t.nodes > 0 && t.ranks == 0) {
        return invalid_argument(task + " asks for " + std::to_string(t.nodes) +
                                " nodes but is no MPI task (give it ranks)");
      }
      if (t.nodes > t.ranks) {
        return invalid_argument(task + " spreads " + std::to_string(t.ranks) + " ranks over " +
                                std::to_string(t.nodes) + " nodes (at most one node per rank)");
      }
      if (task_cores(t) > kMaxSimCores) {
        return invalid_argument(task + " asks for " + std::to_string(t.ranks) + " ranks x " +
                                std::to_string(t.cores) +
                                " cores = " + std::to_string(task_cores(t)) + " cores, more than " +
                                std::to_string(kMaxSimCores));
      }
      for (auto a : t.after) {
        if (a >= k) {
          return invalid_argument(task + " waits for task " + std::to_string(a) +
                                  ", which is not an earlier task of the job");
        }
      }
      for (const TaskRef& r : t.after_other) {
        if (r.job >= w.jobs.size() || r.job == i || r.task >= w.jobs[r.job].tasks.size()) {
          return invalid_argument(task + " waits for task " + std::to_string(r.task) + " of job #" +
                                  std::to_string(r.job + 1) +
                                  ", which is not a task of another job of the workload");
        }
      }
    }
  }
  return check_cross_job_order(w);
}

}  // namespace chorus::sim
