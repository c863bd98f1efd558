#include "schedulers/placement/random_placement.hpp"

#include <cmath>

namespace chorus {
namespace {

// splitmix64's finaliser: a well-mixed 64-bit hash.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Result<std::unique_ptr<PlacementPolicy>> RandomPlacement::from_args(PolicyArgs& args) {
  std::uint64_t seed = 1;
  if (auto n = args.number("seed")) {
    if (*n < 0 || *n != std::floor(*n) || *n > 9e15) {
      args.fail(args.find("seed")->value.at, "'seed' of " + args.policy() +
                                                 " must be a whole number of 0 or more, got " +
                                                 args.find("seed")->value.text);
    } else {
      seed = static_cast<std::uint64_t>(*n);
    }
  }
  return std::unique_ptr<PlacementPolicy>(std::make_unique<RandomPlacement>(seed));
}

double RandomPlacement::score(const TaskSpec& task, const NodeView& node) const {
  const std::uint64_t h =
      mix(seed_ ^ mix(static_cast<std::uint64_t>(task.id) ^
                      mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(node.index)))));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace chorus
