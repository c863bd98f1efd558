// Runtime partitioning (arXiv 2510.15485, §runtime partitioning): divisible work is cut into
// pieces of about a target runtime, so that with non-preemptive dispatch a long job holds a core
// for at most about `target` before the queue policy gets to choose again.
#pragma once

#include <vector>

#include "core/runtime_partition.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

// n = ceil(runtime / target) equal pieces (1 when target <= 0 or runtime <= target); the one
// implementation lives in core/, shared with workflow files' `partition:`.
using chorus::partition_runtime;

// Splits every task of every divisible job; dependencies between split tasks are kept (a piece of
// task b waits for all pieces of a when b waited for a). Jobs that are not divisible, and jobs
// tied to other jobs by after_other (their task indices are referenced), are copied.
Workload partition_divisible(const Workload& w, double target_s);

}  // namespace chorus::sim
