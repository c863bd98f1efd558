#include "schedulers/policy_registry.hpp"

#include "core/text.hpp"

namespace chorus {
namespace {

template <typename Map>
std::vector<std::string> keys(const Map& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

template <typename Map>
auto make_from(const Map& m, const std::string& name, const char* what)
    -> Result<decltype(m.begin()->second())> {
  auto it = m.find(name);
  if (it == m.end()) {
    auto known = keys(m);
    return not_found(std::string("unknown ") + what + " '" + name + "'" +
                     did_you_mean(name, known) + "; known: " + join(known));
  }
  return it->second();
}

}  // namespace

PolicyRegistry PolicyRegistry::with_builtins() {
  PolicyRegistry r;
  register_builtin_policies(r);
  return r;
}

void PolicyRegistry::add_queue(std::string name, QueueFactory factory) {
  std::string label = name;
  queues_[std::move(name)] =
      [label,
       f = std::move(factory)](const QueueConfig& config) -> Result<std::unique_ptr<QueuePolicy>> {
    if (!config.weights.empty()) {
      return invalid_argument("queue policy '" + label +
                              "' takes no user weights (fair, ujf, cfq and uwfq do)");
    }
    if (config.grace) return invalid_argument("queue policy '" + label + "' takes no grace period");
    return f();
  };
}

void PolicyRegistry::add_queue(std::string name, ConfigurableQueueFactory factory) {
  queues_[std::move(name)] = std::move(factory);
}

void PolicyRegistry::add_placement(std::string name, PlacementFactory factory) {
  placements_[std::move(name)] = std::move(factory);
}

Result<std::unique_ptr<QueuePolicy>> PolicyRegistry::make_queue(const std::string& name,
                                                                const QueueConfig& config) const {
  auto it = queues_.find(name);
  if (it == queues_.end()) {
    auto known = keys(queues_);
    return not_found("unknown queue policy '" + name + "'" + did_you_mean(name, known) +
                     "; known: " + join(known));
  }
  return it->second(config);
}

Result<std::unique_ptr<PlacementPolicy>> PolicyRegistry::make_placement(
    const std::string& name) const {
  return make_from(placements_, name, "placement policy");
}

std::vector<std::string> PolicyRegistry::queue_names() const {
  return keys(queues_);
}
std::vector<std::string> PolicyRegistry::placement_names() const {
  return keys(placements_);
}

}  // namespace chorus
