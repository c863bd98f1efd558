// The generators beyond the paper's mixes (issue 18): bursty heavy users and a Zipf-like
// population, with their parameters. Definitions in workload_generator.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/text.hpp"
#include "schedulers/sim/sim_random.hpp"
#include "schedulers/sim/workload_generator.hpp"

namespace chorus::sim {
namespace {

std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const std::vector<GeneratorParam>& bursty_params() {
  static const std::vector<GeneratorParam> p = {
      {"heavy", 3, 0, 1000, true, "heavy users"},
      {"burst_jobs", 2, 1, 1000, true, "jobs in each burst of a heavy user (arriving together)"},
      {"job_tasks", 32, 1, 10000, true, "tasks of each heavy job"},
      {"task_min", 4, 0.001, 1e5, false, "shortest heavy task (s)"},
      {"task_max", 9, 0.001, 1e5, false, "longest heavy task (s)"},
      {"gap_min", 40, 0.001, 1e6, false, "shortest time between a heavy user's bursts (s)"},
      {"gap_max", 70, 0.001, 1e6, false, "longest time between a heavy user's bursts (s)"},
      {"light", 5, 0, 1000, true, "light users"},
      {"light_tasks_min", 1, 1, 10000, true, "fewest tasks of a light job"},
      {"light_tasks_max", 4, 1, 10000, true, "most tasks of a light job"},
      {"light_task_min", 0.3, 0.001, 1e5, false, "shortest light task (s)"},
      {"light_task_max", 1.5, 0.001, 1e5, false, "longest light task (s)"},
      {"light_interarrival", 12, 0.001, 1e6, false, "mean time between a light user's jobs (s)"},
      {"horizon", 600, 1, 1e7, false, "arrivals happen in [0, horizon) s (x scale)"},
  };
  return p;
}

const std::vector<GeneratorParam>& zipf_params() {
  static const std::vector<GeneratorParam> p = {
      {"users", 20, 1, 100000, true, "users; user k (1-based) is active in proportion to k^-s"},
      {"s", 1.1, 0, 10, false, "Zipf exponent of users' activity (0 = all alike)"},
      {"jobs", 600, 1, 1e6, true, "jobs (x scale)"},
      {"window", 400, 0.001, 1e7, false, "jobs arrive uniformly in [0, window) s (x scale)"},
      {"work_median", 6, 0.001, 1e6, false, "median work of a job (core-s), log-normal"},
      {"work_sigma", 1.5, 0, 5, false, "sigma of the log of the work (the tail's weight)"},
      {"work_max", 3000, 0.001, 1e7, false, "work is clipped to [0.05, work_max] core-s"},
      {"task_s", 4, 0.001, 1e5, false, "a job is ceil(work / task_s) equal 1-core tasks..."},
      {"max_tasks", 64, 1, 10000, true, "...but at most this many (then longer ones)"},
  };
  return p;
}

// The value of every parameter of `specs`: `given` or the default. Errors: an unknown key, a
// value out of range or not whole where it must be, a _min above its _max.
Result<std::map<std::string, double>> resolve(std::string_view gen,
                                              const std::vector<GeneratorParam>& specs,
                                              const GeneratorValues& given) {
  std::map<std::string, double> v;
  std::vector<std::string> keys;
  for (const auto& s : specs) {
    v[s.key] = s.default_value;
    keys.push_back(s.key);
  }
  for (const auto& entry : given) {
    // Named copies, not a structured binding: clang 14 cannot capture a binding in a lambda.
    const auto& key = entry.first;
    const auto& value = entry.second;
    auto it = std::find_if(specs.begin(), specs.end(),
                           [&key](const GeneratorParam& s) { return s.key == key; });
    if (it == specs.end()) {
      return invalid_argument("generator '" + std::string(gen) + "' takes no parameter '" + key +
                              "'" + did_you_mean(key, keys) + "; it takes: " + join(keys));
    }
    if (!std::isfinite(value) || value < it->min || value > it->max ||
        (it->integer && value != std::floor(value))) {
      return invalid_argument("generator '" + std::string(gen) + "' parameter '" + key +
                              "' must be " + (it->integer ? "a whole number" : "a number") +
                              " in [" + num_text(it->min) + ", " + num_text(it->max) + "], got " +
                              num_text(value));
    }
    v[key] = value;
  }
  for (const auto& s : specs) {
    if (!s.key.ends_with("_min")) continue;
    std::string max_key = s.key.substr(0, s.key.size() - 4) + "_max";
    if (v.count(max_key) && v[s.key] > v[max_key]) {
      return invalid_argument("generator '" + std::string(gen) + "': " + s.key + " (" +
                              num_text(v[s.key]) + ") is above " + max_key + " (" +
                              num_text(v[max_key]) + ")");
    }
  }
  return v;
}

int uniform_int(SimRandom& rng, int lo, int hi) {
  return std::min(hi, lo + static_cast<int>(rng.uniform() * (hi - lo + 1)));
}

Workload bursty(std::map<std::string, double> p, SimRandom& rng, double scale) {
  Workload w;
  w.name = "bursty";
  const double horizon = p["horizon"] * scale;
  const int heavy = static_cast<int>(p["heavy"]), light = static_cast<int>(p["light"]);
  for (int h = 0; h < heavy; ++h) {
    std::string user = "heavy" + std::to_string(h + 1);
    // The first burst at a uniform time within one gap, the next ones a uniform gap apart.
    double t = rng.uniform(0, p["gap_max"]);
    for (int b = 1; t < horizon; ++b, t += rng.uniform(p["gap_min"], p["gap_max"])) {
      for (int k = 1; k <= static_cast<int>(p["burst_jobs"]); ++k) {
        SimJob j;
        j.id = user + "-b" + std::to_string(b) + "-" + std::to_string(k);
        j.user = user;
        j.job_class = "heavy";
        j.size = SizeClass::large;
        j.arrival_s = t;
        j.divisible = true;
        for (int i = 0; i < static_cast<int>(p["job_tasks"]); ++i) {
          j.tasks.push_back(SimTask{rng.uniform(p["task_min"], p["task_max"]), 1, {}, {}});
        }
        w.jobs.push_back(std::move(j));
      }
    }
  }
  for (int l = 0; l < light; ++l) {
    std::string user = "light" + std::to_string(l + 1);
    double t = rng.exponential(p["light_interarrival"]);
    for (int k = 1; t < horizon; ++k, t += rng.exponential(p["light_interarrival"])) {
      SimJob j;
      j.id = user + "-" + std::to_string(k);
      j.user = user;
      j.job_class = "light";
      j.size = SizeClass::small;
      j.arrival_s = t;
      j.divisible = true;
      int n = uniform_int(rng, static_cast<int>(p["light_tasks_min"]),
                          static_cast<int>(p["light_tasks_max"]));
      for (int i = 0; i < n; ++i) {
        j.tasks.push_back(
            SimTask{rng.uniform(p["light_task_min"], p["light_task_max"]), 1, {}, {}});
      }
      w.jobs.push_back(std::move(j));
    }
  }
  return w;
}

Workload zipf(std::map<std::string, double> p, SimRandom& rng, double scale) {
  const int users = static_cast<int>(p["users"]);
  const int jobs = std::max(1, static_cast<int>(std::lround(p["jobs"] * scale)));
  const double window = p["window"] * scale;
  std::vector<double> cumulative(static_cast<std::size_t>(users));
  double sum = 0;
  for (int i = 0; i < users; ++i) cumulative[i] = (sum += std::pow(i + 1.0, -p["s"]));
  std::vector<double> arrivals(static_cast<std::size_t>(jobs));
  for (auto& a : arrivals) a = rng.uniform(0, window);
  std::sort(arrivals.begin(), arrivals.end());
  Workload w;
  w.name = "zipf";
  for (int k = 0; k < jobs; ++k) {
    double pick = rng.uniform(0, sum);
    int user = static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end(), pick) -
                                cumulative.begin());
    user = std::min(user, users - 1);
    double work = std::clamp(rng.lognormal(p["work_median"], p["work_sigma"]), 0.05, p["work_max"]);
    int n =
        static_cast<int>(std::min(p["max_tasks"], std::max(1.0, std::ceil(work / p["task_s"]))));
    SimJob j;
    j.id = "job" + std::to_string(k + 1);
    j.user = "user" + std::to_string(user + 1);
    j.arrival_s = arrivals[static_cast<std::size_t>(k)];
    j.divisible = true;  // size class: by the median work (metrics.hpp)
    for (int i = 0; i < n; ++i) j.tasks.push_back(SimTask{work / n, 1, {}, {}});
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace

std::vector<GeneratorParam> generator_params(std::string_view mix) {
  if (mix == "bursty") return bursty_params();
  if (mix == "zipf") return zipf_params();
  return {};
}

namespace detail {

std::optional<Result<Workload>> generate_beyond(std::string_view mix, std::uint64_t seed,
                                                double scale, const GeneratorValues& values) {
  if (mix != "bursty" && mix != "zipf") return std::nullopt;
  auto p = resolve(mix, generator_params(mix), values);
  if (!p.ok()) return Result<Workload>(p.status());
  SimRandom rng(seed);
  return Result<Workload>(mix == "bursty" ? bursty(std::move(*p), rng, scale)
                                          : zipf(std::move(*p), rng, scale));
}

}  // namespace detail
}  // namespace chorus::sim
