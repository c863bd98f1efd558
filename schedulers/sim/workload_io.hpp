// Reading workloads from JSON or CSV and writing per-job records. The only I/O of the simulator.
//
// JSON: {"name": "...", "jobs": [job, ...]} or a bare array of jobs, where a job is
//   {"id": "j1", "user": "alice", "class": "etl", "size": "small"|"large", "arrival": 0.5,
//    "after_previous": false, "divisible": false, "weight": 1,
//    "tasks": [{"runtime": 1.5, "cores": 1, "after": [0]}, ...]}
// "tasks" may also be {"count": 8, "runtime": 1.0, "cores": 1}. Required: id, user, arrival
// (seconds >= 0), tasks with runtimes (seconds > 0). "weight" (> 0, default 1) is the job's
// share of its user's share under uwfq. An MPI task adds "ranks" (>= 1; "cores" is then per rank)
// and optionally "nodes" (1 to its ranks; absent: on one node when one has room, else as few as
// fit; as SimTask). Unknown keys are errors.
//
// CSV: one row per task, a header naming the columns: job,user,arrival,runtime are required;
// cores, class, size, divisible, weight, ranks, nodes are optional (a job's first row gives its
// weight; an empty ranks field is a plain task). Rows of one job share its arrival.
#pragma once

#include <string>
#include <string_view>

#include "core/status.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

// Errors: invalid_argument "<source>:<line>[:<col>]: <what>" for malformed input; the workload
// is also checked with validate_workload().
Result<Workload> read_workload_json(std::string_view text, const std::string& source);
Result<Workload> read_workload_csv(std::string_view text, const std::string& source);

// By extension: .json or .csv. Errors: io_error (with the OS's reason), or as above.
Result<Workload> load_workload_file(const std::string& path);

// The workload as JSON in the format read_workload_json reads, so that it reads back to the same
// jobs (runtimes and arrivals with 17 significant digits). Errors: invalid_argument for what that
// format cannot say (a task waiting for another job's, a task that moves data), naming the job.
Result<std::string> workload_json(const Workload& w);

// Per-job records of one or more runs (one row/object per job, with the policy's name).
std::string records_csv(const std::vector<SimResult>& runs);
std::string records_json(const std::vector<SimResult>& runs);

// Writes `text` to `path`. Errors: io_error.
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace chorus::sim
