// Seeded workload generators: the user mixes of arXiv 2510.15485's synthetic experiments and a
// heavy-tailed trace-like mix. The same (mix, seed, scale) always gives the same workload.
//
// Job shapes (1-core tasks, runtimes jittered ±25% per task):
//   small        8 tasks × 1 s      (8 core-s)        large/power  64 tasks × 4 s (256 core-s)
//   super-small  4 tasks × 0.25 s   (1 core-s)
// Users (Poisson arrivals; counts × scale):
//   large: 30 jobs, one every 20 s on average       power: 45 large jobs, one every 12 s
//   small: 100 jobs, one every 6 s                  super-small: 1000 jobs, one every 0.15 s
// Mixes: 2large2small, 2power2small, 4large, 4supersmall; with the suffix "-b2b" each user
// instead submits its next job as soon as its previous one finished (closed loop). On 8x4
// (32 cores) the Poisson mixes load the cluster to about 0.9, except 2power2small (about 1.4:
// the power users overload it by design).
// trace: 27 users with Zipf-distributed activity, 800 jobs arriving uniformly in a 500 s window,
// each one divisible 1-core task with a log-normal runtime (median 400 s, clipped to 0.1–1800 s);
// small = under 60 s. Meant for a cluster of about 1,000 cores (e.g. 32x32). Counts × scale.
// All generated jobs are divisible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

// The mix names generate_workload() accepts.
std::vector<std::string> generator_names();

// Errors: not_found for an unknown mix (listing the known ones); invalid_argument for a scale
// that is not positive.
Result<Workload> generate_workload(std::string_view mix, std::uint64_t seed, double scale = 1.0);

}  // namespace chorus::sim
