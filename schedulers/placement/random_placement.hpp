// random: a uniformly random node among those that fit now, the baseline of the network-aware
// comparison. Pure and reproducible: the score is a hash of (seed, task id, node index), so the
// same run with the same `seed:` places the same way, and the policy holds no generator state.
#pragma once

#include <cstdint>
#include <memory>

#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"

namespace chorus {

class RandomPlacement final : public PlacementPolicy {
 public:
  explicit RandomPlacement(std::uint64_t seed) : seed_(seed) {}

  static std::vector<OptionSpec> option_specs() { return {{"seed", OptionKind::number}}; }
  static Result<std::unique_ptr<PlacementPolicy>> from_args(PolicyArgs& args);

  std::string_view name() const override { return "random"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  // In [0, 1).
  double score(const TaskSpec& task, const NodeView& node) const override;

 private:
  std::uint64_t seed_;
};

}  // namespace chorus
