// Runtime partitioning (arXiv 2510.15485): divisible work is cut into equal pieces of about a
// target runtime, so that with non-preemptive dispatch a long job holds a core for at most about
// `target` before the queue policy chooses again. Pure; used by workflow files
// (`partition: {work, target}`) and by the simulator (schedulers/sim/runtime_partitioning.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace chorus {

// n = ceil(runtime / target) pieces; 1 when target <= 0 or runtime <= target. Saturates at
// UINT64_MAX for absurd ratios (callers bound it before allocating).
std::uint64_t partition_count(double runtime_s, double target_s);

// partition_count(runtime, target) equal pieces of runtime / n seconds.
std::vector<double> partition_runtime(double runtime_s, double target_s);

}  // namespace chorus
