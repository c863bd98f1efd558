#include "core/runtime_partition.hpp"

#include <cmath>
#include <limits>

namespace chorus {

std::uint64_t partition_count(double runtime_s, double target_s) {
  if (!(target_s > 0) || !(runtime_s > target_s)) return 1;
  double n = std::ceil(runtime_s / target_s);
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  if (!(n < static_cast<double>(kMax))) return kMax;
  return static_cast<std::uint64_t>(n);
}

std::vector<double> partition_runtime(double runtime_s, double target_s) {
  std::uint64_t n = partition_count(runtime_s, target_s);
  return std::vector<double>(n, runtime_s / static_cast<double>(n));
}

}  // namespace chorus
