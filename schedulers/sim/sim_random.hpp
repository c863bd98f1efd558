// SimRandom: a seeded generator whose sequence is fixed by this code alone (xoshiro256** seeded
// through splitmix64), so generated workloads are identical on every platform and standard
// library; std:: distributions are not, which is why the variates are computed here too.
#pragma once

#include <cstdint>

namespace chorus::sim {

class SimRandom {
 public:
  explicit SimRandom(std::uint64_t seed);
  std::uint64_t next_u64();
  double uniform();                      // [0, 1)
  double uniform(double lo, double hi);  // [lo, hi)
  double exponential(double mean);       // mean > 0
  double normal();                       // standard normal (Box-Muller)
  double lognormal(double median, double sigma);

 private:
  std::uint64_t s_[4];
};

}  // namespace chorus::sim
