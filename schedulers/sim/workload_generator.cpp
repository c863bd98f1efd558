#include "schedulers/sim/workload_generator.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"
#include "schedulers/sim/sim_random.hpp"

namespace chorus::sim {
namespace {

enum class UserKind : std::uint8_t { small, large, power, super_small };

struct Shape {
  int tasks;
  double runtime_s;
  SizeClass size;
  const char* job_class;
};

Shape shape_of(UserKind k) {
  switch (k) {
    case UserKind::small:
      return {8, 1.0, SizeClass::small, "small"};
    case UserKind::large:
      return {64, 4.0, SizeClass::large, "large"};
    case UserKind::power:
      return {64, 4.0, SizeClass::large, "large"};
    case UserKind::super_small:
      return {4, 0.25, SizeClass::small, "super-small"};
  }
  return {1, 1.0, SizeClass::unknown, "job"};
}

struct Rate {
  int jobs;
  double mean_interarrival_s;
};

Rate rate_of(UserKind k) {
  switch (k) {
    case UserKind::small:
      return {100, 6.0};
    case UserKind::large:
      return {30, 20.0};
    case UserKind::power:
      return {45, 12.0};
    case UserKind::super_small:
      return {1000, 0.15};
  }
  return {1, 1.0};
}

const char* kind_name(UserKind k) {
  switch (k) {
    case UserKind::small:
      return "small";
    case UserKind::large:
      return "large";
    case UserKind::power:
      return "power";
    case UserKind::super_small:
      return "supersmall";
  }
  return "user";
}

struct Mix {
  const char* name;
  std::vector<UserKind> users;
};

const std::vector<Mix>& mixes() {
  static const std::vector<Mix> m = {
      {"2large2small", {UserKind::large, UserKind::large, UserKind::small, UserKind::small}},
      {"2power2small", {UserKind::power, UserKind::power, UserKind::small, UserKind::small}},
      {"4large", {UserKind::large, UserKind::large, UserKind::large, UserKind::large}},
      {"4supersmall",
       {UserKind::super_small, UserKind::super_small, UserKind::super_small,
        UserKind::super_small}},
  };
  return m;
}

Workload user_mix(const Mix& mix, bool back_to_back, SimRandom& rng, double scale) {
  Workload w;
  w.name = std::string(mix.name) + (back_to_back ? "-b2b" : "");
  for (std::size_t u = 0; u < mix.users.size(); ++u) {
    UserKind kind = mix.users[u];
    Shape shape = shape_of(kind);
    Rate rate = rate_of(kind);
    std::string user = std::string(kind_name(kind)) + std::to_string(u + 1);
    int jobs = std::max(1, static_cast<int>(std::lround(rate.jobs * scale)));
    double t = 0;
    for (int k = 0; k < jobs; ++k) {
      SimJob j;
      j.id = user + "-" + std::to_string(k + 1);
      j.user = user;
      j.job_class = shape.job_class;
      j.size = shape.size;
      j.divisible = true;
      if (back_to_back) {
        // The first job in the first second, the others right after the previous one.
        j.after_previous = k > 0;
        j.arrival_s = k == 0 ? rng.uniform(0, 1) : 0;
      } else {
        t += rng.exponential(rate.mean_interarrival_s);
        j.arrival_s = t;
      }
      for (int i = 0; i < shape.tasks; ++i) {
        j.tasks.push_back(SimTask{shape.runtime_s * rng.uniform(0.75, 1.25), 1, {}, {}});
      }
      w.jobs.push_back(std::move(j));
    }
  }
  return w;
}

Workload trace_like(SimRandom& rng, double scale) {
  constexpr int kUsers = 27;
  constexpr double kWindow = 500;
  int jobs = std::max(1, static_cast<int>(std::lround(800 * scale)));
  // Zipf(1) activity: user i submits in proportion to 1 / (i + 1).
  std::vector<double> cumulative(kUsers);
  double sum = 0;
  for (int i = 0; i < kUsers; ++i) cumulative[i] = (sum += 1.0 / (i + 1));
  std::vector<double> arrivals(jobs);
  for (auto& a : arrivals) a = rng.uniform(0, kWindow);
  std::sort(arrivals.begin(), arrivals.end());
  Workload w;
  w.name = "trace";
  for (int k = 0; k < jobs; ++k) {
    double pick = rng.uniform(0, sum);
    int user = static_cast<int>(std::lower_bound(cumulative.begin(), cumulative.end(), pick) -
                                cumulative.begin());
    user = std::min(user, kUsers - 1);
    double runtime = std::clamp(rng.lognormal(400, 1.3), 0.1, 1800.0);
    SimJob j;
    j.id = "job" + std::to_string(k + 1);
    j.user = "user" + std::to_string(user + 1);
    j.job_class = runtime < 60 ? "short" : "long";
    j.size = runtime < 60 ? SizeClass::small : SizeClass::large;
    j.arrival_s = arrivals[k];
    j.divisible = true;
    j.tasks.push_back(SimTask{runtime, 1, {}, {}});
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace

std::vector<std::string> generator_names() {
  std::vector<std::string> names;
  for (const auto& m : mixes()) {
    names.push_back(m.name);
    names.push_back(std::string(m.name) + "-b2b");
  }
  names.push_back("trace");
  names.push_back("bursty");
  names.push_back("zipf");
  return names;
}

Result<Workload> generate_workload(std::string_view mix, std::uint64_t seed, double scale,
                                   const GeneratorValues& values) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return invalid_argument("generator scale must be a positive number");
  }
  if (auto beyond = detail::generate_beyond(mix, seed, scale, values)) return std::move(*beyond);
  const auto known = generator_names();
  if (!values.empty() && std::find(known.begin(), known.end(), mix) != known.end()) {
    return invalid_argument("generator '" + std::string(mix) +
                            "' takes no parameters (bursty and zipf do)");
  }
  SimRandom rng(seed);
  if (mix == "trace") return trace_like(rng, scale);
  for (const auto& m : mixes()) {
    if (mix == m.name) return user_mix(m, false, rng, scale);
    if (mix == std::string(m.name) + "-b2b") return user_mix(m, true, rng, scale);
  }
  auto names = generator_names();
  return Status(ErrorCode::not_found, "unknown workload generator '" + std::string(mix) + "'" +
                                          did_you_mean(mix, names) + "; known: " + join(names));
}

}  // namespace chorus::sim
