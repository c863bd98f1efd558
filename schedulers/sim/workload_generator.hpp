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
// bursty (parameters below, defaults in brackets): `heavy` [3] heavy users each drop a burst of
// `burst_jobs` [2] jobs (arriving together) of `job_tasks` [32] tasks of uniform `task_min`-
// `task_max` [4-9] s, the first burst at a uniform time in [0, gap_max), the next ones a uniform
// `gap_min`-`gap_max` [40-70] s apart; `light` [5] light users send Poisson jobs (one every
// `light_interarrival` [12] s on average) of `light_tasks_min`-`light_tasks_max` [1-4] tasks of
// uniform `light_task_min`-`light_task_max` [0.3-1.5] s; arrivals in [0, `horizon` x scale)
// [600 s]. Heavy jobs are large, light ones small. With the defaults on 8x4 the heavy users offer
// about 0.71 of the cluster and the light ones 0.03, in bursts that overload it for a while.
// zipf: `users` [20] users, user k (1-based) submitting in proportion to k^-`s` [1.1]; `jobs`
// [600] x scale jobs arriving uniformly in [0, `window` x scale) [400 s]; each job's work is
// log-normal (median `work_median` [6] core-s, sigma `work_sigma` [1.5], clipped to [0.05,
// `work_max` [3000]]), as ceil(work / `task_s` [4]) equal 1-core tasks, at most `max_tasks` [64].
// Size class: by the run's median work (metrics.hpp). The defaults offer about 0.87 of 8x4.
// All generated jobs are divisible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

// The mix names generate_workload() accepts.
std::vector<std::string> generator_names();

// A generator's parameter (bursty and zipf have them; the paper's mixes and trace do not).
struct GeneratorParam {
  std::string key;
  double default_value;
  double min, max;  // accepted range, inclusive
  bool integer;     // a whole number
  std::string meaning;
};
// The parameters `mix` takes, in the order documented above (empty for a mix without any).
std::vector<GeneratorParam> generator_params(std::string_view mix);
// Values by key; a missing key takes its default.
using GeneratorValues = std::map<std::string, double>;

// Errors: not_found for an unknown mix (listing the known ones); invalid_argument for a scale
// that is not positive, and for `values` the mix does not take (an unknown key, naming the known
// ones; a value out of its range or not whole where it must be; a _min above its _max).
Result<Workload> generate_workload(std::string_view mix, std::uint64_t seed, double scale = 1.0,
                                   const GeneratorValues& values = {});

namespace detail {
// bursty and zipf (workload_generator_beyond.cpp); nullopt for another mix.
std::optional<Result<Workload>> generate_beyond(std::string_view mix, std::uint64_t seed,
                                                double scale, const GeneratorValues& values);
}  // namespace detail

}  // namespace chorus::sim
