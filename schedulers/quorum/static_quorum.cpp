#include "schedulers/quorum/static_quorum.hpp"

#include <algorithm>
#include <cmath>

namespace chorus {

Result<std::unique_ptr<QuorumPolicy>> StaticQuorum::from_args(PolicyArgs& args) {
  const OptionEntry* k = args.find("k");
  const OptionEntry* b = args.find("b");
  if (k != nullptr && b != nullptr) {
    args.fail(b->key_at,
              "quorum policy 'static' takes 'k' (results to use) or 'b' (backup "
              "workers, k = n - b), not both");
    return std::unique_ptr<QuorumPolicy>();
  }
  if (k == nullptr && b == nullptr) {
    return invalid_argument(
        "quorum policy 'static' needs 'k' (results to use per round) or 'b' (backup workers: "
        "k = n - b)");
  }
  const OptionEntry* e = k != nullptr ? k : b;
  const double v = *args.number(e->key);
  const double least = k != nullptr ? 1 : 0;
  if (v < least || v != std::floor(v) || v > 1e6) {
    args.fail(e->value.at, "'" + e->key + "' of quorum policy 'static' must be a whole number of " +
                               (k != nullptr ? "1" : "0") + " or more, got " + e->value.text);
    return std::unique_ptr<QuorumPolicy>();
  }
  return std::unique_ptr<QuorumPolicy>(
      std::make_unique<StaticQuorum>(static_cast<int>(v), b != nullptr));
}

void StaticQuorum::begin(const RoundStart& round) {
  const int k = by_backups_ ? round.n - value_ : value_;
  k_ = std::clamp(k, 1, std::max(round.n, 1));
}

}  // namespace chorus
