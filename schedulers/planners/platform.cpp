#include "schedulers/planners/platform.hpp"

#include <cmath>
#include <unordered_set>

namespace chorus {

std::size_t Platform::fastest() const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < types.size(); ++i) {
    if (types[i].speed > types[best].speed) best = i;
  }
  return best;
}

double Platform::mean_speed() const {
  double sum = 0;
  for (const auto& t : types) sum += t.speed;
  return types.empty() ? 0.0 : sum / static_cast<double>(types.size());
}

Status validate_platform(const Platform& platform) {
  const std::string where = platform.name.empty() ? "platform" : "platform '" + platform.name + "'";
  if (platform.types.empty()) {
    return invalid_argument(where + ": no machine types (list at least one under machine_types)");
  }
  std::unordered_set<std::string> names;
  for (std::size_t i = 0; i < platform.types.size(); ++i) {
    const auto& t = platform.types[i];
    const std::string who = where + ": machine type " +
                            (t.name.empty() ? "#" + std::to_string(i + 1) : "'" + t.name + "'");
    if (t.name.empty()) return invalid_argument(who + " has no name");
    if (!names.insert(t.name).second) return invalid_argument(who + " is listed twice");
    if (!(t.speed > 0) || !std::isfinite(t.speed)) {
      return invalid_argument(who + ": speed must be > 0 (got " + std::to_string(t.speed) + ")");
    }
    if (!(t.price >= 0) || !std::isfinite(t.price)) {
      return invalid_argument(who + ": price must be >= 0 (got " + std::to_string(t.price) + ")");
    }
    if (t.cores < 1) return invalid_argument(who + ": cores must be >= 1");
    if (t.count < 1) return invalid_argument(who + ": count must be >= 1");
  }
  return {};
}

}  // namespace chorus
