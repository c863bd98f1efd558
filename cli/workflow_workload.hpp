// A workflow file as a simulator workload (chorus simulate --workload wf.yaml): the same users,
// jobs and dependencies the live coordinator would see, in simulated time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/policy_options.hpp"
#include "core/status.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::cli {

struct WorkflowWorkload {
  sim::Workload workload;
  std::map<std::string, double> user_weights;  // the file's `scheduler: {weights: ...}`
  PolicyOptions policy_options;                // the file's scheduler section's options
  std::vector<std::string> services;           // left out (see below)
};

// One simulated job per (user, job) — a task entry's tasks (a sweep's members), or the entries
// that share a `job:` name — all arriving at time 0, with the file's job weights; the workflow's
// dependencies stay as they are, inside a job (`after`) and across jobs (`after_other`). A task's
// runtime is its `estimate:`, else the mean runtime of its job class over this workflow's newest
// 20 earlier runs in the journal under `state_dir` (what uwfq's HistoryWork learns from live),
// else the task entry is a located error. An MPI task keeps its shape (ranks x cores per rank,
// `nodes:`), so the simulator spreads it over nodes as a live run does. Service replicas are left
// out (they hold their cores for as long as the run lasts, not for a runtime), and so are waits on
// them. Without runtime:
//   "wf.yaml:6:11: chorus simulate needs a runtime for every task, and 'b' has none: ..."
// Errors: the workflow's own (located), invalid_argument for tasks without runtimes.
Result<WorkflowWorkload> workflow_workload(const std::string& path, const std::string& state_dir);

}  // namespace chorus::cli
