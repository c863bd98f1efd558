// The simulator's workload model: jobs of users, each job a set of tasks with true runtimes.
//
// A job arrives at `arrival_s` (seconds from the start), or — when `after_previous` is set — that
// many seconds after the same user's previous job (in workload order) has finished: a closed-loop,
// back-to-back user. Tasks of a job become ready at its arrival unless they wait for other tasks of
// the same job (`after`, indices of earlier tasks). A divisible job's tasks may be split by runtime
// partitioning (runtime_partitioning.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/data_movement.hpp"
#include "core/status.hpp"

namespace chorus::sim {

// Bounds of a workload's numbers, so that every time the simulator computes fits its clock
// (int64 nanoseconds, about 292 years) and every sum stays finite: runtimes and arrivals in
// seconds (about 31 years, as core/units' durations), cores per task.
inline constexpr double kMaxSimSeconds = 1e9;
inline constexpr int kMaxSimCores = 1'048'576;
// Tasks of a workload as the readers accept it (a job file of a few bytes can ask for
// {"count": 10000000} tasks per job).
inline constexpr std::uint64_t kMaxSimTasks = 10'000'000;

enum class SizeClass : std::uint8_t { unknown, small, large };
const char* to_string(SizeClass c);

// A task of another job of the workload: jobs[job].tasks[task].
struct TaskRef {
  std::uint32_t job;
  std::uint32_t task;
};

struct SimTask {
  double runtime_s = 0;              // true runtime; also the oracle's estimate
  int cores = 1;                     // of the task; of each rank for an MPI task
  std::vector<std::uint32_t> after;  // indices of earlier tasks of the same job
  // Tasks of other jobs it waits for (a workflow's users' and jobs' tasks depending on each
  // other); only in workloads whose jobs all have a fixed arrival (no after_previous).
  std::vector<TaskRef> after_other;
  // An MPI task: `ranks` ranks of `cores` cores each, spread over nodes as a live MPI task is
  // (PlacementStep): nodes 0 = on one node when one has room, else as few nodes as fit; 1 = one
  // node; N = exactly N nodes, block distribution. ranks 0 = not an MPI task.
  int ranks = 0;
  int nodes = 0;
  // What it moves (network_model.hpp): with a modelled network its true runtime is the transfer
  // times plus runtime_s (then its CPU seconds on an unloaded core) over its CPU share.
  DataMovement data{};
};

struct SimJob {
  std::string id;  // unique
  std::string user;
  std::string job_class;  // groups runs of the same job (history estimator); empty = id
  SizeClass size = SizeClass::unknown;  // unknown: classified by work against the median
  double arrival_s = 0;
  bool after_previous = false;
  bool divisible = false;
  double weight = 1;  // w_j: its share of its user's share (uwfq), against the user's other jobs
  std::vector<SimTask> tasks;

  double work() const;  // core-seconds
};

// Cores a task holds while it runs: its cores, times its ranks for an MPI task.
inline std::int64_t task_cores(const SimTask& t) {
  return static_cast<std::int64_t>(t.cores) * (t.ranks > 0 ? t.ranks : 1);
}

struct Workload {
  std::string name;
  std::vector<SimJob> jobs;
  std::size_t task_count() const;
};

// Errors (invalid_argument, naming the job): an empty or duplicate id, a job arriving before
// time 0 or after kMaxSimSeconds, a weight that is not a positive finite number, a job with no
// tasks, a task with no runtime (or a non-finite one, or one above kMaxSimSeconds), a task asking
// for no cores or more than kMaxSimCores (an MPI task: per rank, and in all), ranks or nodes below
// 0 or above kMaxSimCores, nodes without ranks, nodes above ranks, an `after` index that is not an
// earlier task, an `after_other` naming no task of another job, a cycle through `after_other`,
// `after_other` in a workload with closed-loop (after_previous) jobs.
Status validate_workload(const Workload& w);

}  // namespace chorus::sim
