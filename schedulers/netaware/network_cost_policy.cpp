#include "schedulers/netaware/network_cost_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/text.hpp"

#include "schedulers/placement/least_allocated.hpp"

namespace chorus {
namespace {

std::optional<double> cost_number(const OptionValue& v) {
  if (v.kind != OptionValue::Kind::scalar) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v.text.c_str(), &end);
  if (v.text.empty() || end != v.text.c_str() + v.text.size() || !std::isfinite(d) || d < 0) {
    return std::nullopt;
  }
  return d;
}

int zone_index(NetworkCostPolicy::Topology& t, const std::string& zone) {
  for (std::size_t i = 0; i < t.zones.size(); ++i) {
    if (t.zones[i] == zone) return static_cast<int>(i);
  }
  t.zones.push_back(zone);
  return static_cast<int>(t.zones.size() - 1);
}

}  // namespace

std::vector<OptionSpec> NetworkCostPolicy::option_specs() {
  return {{"topology", OptionKind::map}};
}

Result<std::unique_ptr<PlacementPolicy>> NetworkCostPolicy::from_args(PolicyArgs& args) {
  Topology t;
  const OptionEntry* topo = args.find("topology");
  const std::string label = "'topology' of " + args.policy();
  struct PairCost {
    std::string a, b;
    double cost;
    OptionOrigin at;
  };
  std::vector<PairCost> pairs;
  if (topo != nullptr) {
    for (const OptionEntry& part : topo->value.items) {
      if (part.key == "zones") {
        if (part.value.kind != OptionValue::Kind::map) {
          args.fail(part.value.at, label +
                                       ": 'zones' must map node and source names to zones, "
                                       "such as {node-a: east, store1: west}");
          continue;
        }
        for (const OptionEntry& z : part.value.items) {
          if (z.value.kind != OptionValue::Kind::scalar || z.value.text.empty()) {
            args.fail(z.value.at, label + ": the zone of '" + z.key + "' must be a name, got " +
                                      z.value.describe());
            continue;
          }
          t.zone_of[z.key] = zone_index(t, z.value.text);
        }
      } else if (part.key == "costs") {
        if (part.value.kind != OptionValue::Kind::map) {
          args.fail(part.value.at,
                    label + ": 'costs' must map zone pairs to costs, such as {east-west: 10}");
          continue;
        }
        for (const OptionEntry& c : part.value.items) {
          const std::size_t dash = c.key.find('-');
          auto v = cost_number(c.value);
          if (dash == std::string::npos || dash == 0 || dash + 1 == c.key.size()) {
            args.fail(c.key_at, label + ": cost key '" + c.key +
                                    "' must name two zones as ZONE-ZONE, such as east-west");
          } else if (!v) {
            args.fail(c.value.at, label + ": the cost of '" + c.key +
                                      "' must be a number of 0 or more, got " + c.value.describe());
          } else {
            pairs.push_back({c.key.substr(0, dash), c.key.substr(dash + 1), *v, c.key_at});
          }
        }
      } else if (part.key == "default_cost") {
        if (auto v = cost_number(part.value)) {
          t.default_cost = *v;
        } else {
          args.fail(part.value.at, label + ": 'default_cost' must be a number of 0 or more, got " +
                                       part.value.describe());
        }
      } else {
        args.fail(part.key_at,
                  label + " takes zones, costs and default_cost, not '" + part.key + "'");
      }
    }
  }
  // A cost between zones no node or source is in can never apply: a typo ("east-wset") would
  // otherwise leave the default cost in force without a word.
  const std::vector<std::string> named = t.zones;  // the zones `zones:` gave, in order
  auto is_named = [&](const std::string& z) {
    return std::find(named.begin(), named.end(), z) != named.end();
  };
  for (const PairCost& p : pairs) {
    for (const std::string* z : {&p.a, &p.b}) {
      if (is_named(*z)) continue;
      args.fail(p.at, label + ": zone '" + *z + "' of cost '" + p.a + "-" + p.b +
                          "' is no node's or source's zone in 'zones'" +
                          (named.empty() ? std::string(" (none is given)")
                                         : did_you_mean(*z, named) + "; zones: " + join(named)));
      break;
    }
  }
  for (const PairCost& p : pairs) {
    zone_index(t, p.a);
    zone_index(t, p.b);
  }
  const std::size_t n = t.zones.size();
  t.cost.assign(n, std::vector<double>(n, t.default_cost));
  for (std::size_t i = 0; i < n; ++i) t.cost[i][i] = 0;
  for (const PairCost& p : pairs) {
    const auto a = static_cast<std::size_t>(zone_index(t, p.a));
    const auto b = static_cast<std::size_t>(zone_index(t, p.b));
    t.cost[a][b] = t.cost[b][a] = p.cost;
  }
  for (const std::string& s : args.context().source_names) {
    auto it = t.zone_of.find(s);
    t.source_zone.push_back(it == t.zone_of.end() ? -1 : it->second);
  }
  return std::unique_ptr<PlacementPolicy>(std::make_unique<NetworkCostPolicy>(std::move(t)));
}

double NetworkCostPolicy::pair_cost(int a, int b) const {
  if (a < 0 || b < 0) return topo_.default_cost;
  return topo_.cost[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
}

double NetworkCostPolicy::cost(const TaskSpec& task, const NodeView& node) const {
  auto it = topo_.zone_of.find(std::string_view(node.info->name));
  const int zone = it == topo_.zone_of.end() ? -1 : it->second;
  auto source = [&](SourceId s) {
    return s < topo_.source_zone.size() ? topo_.source_zone[s] : -1;
  };
  double sum = 0;
  if (task.data.from != kNoSource) sum += pair_cost(zone, source(task.data.from));
  if (task.data.to != kNoSource) sum += pair_cost(zone, source(task.data.to));
  return sum;
}

double NetworkCostPolicy::score(const TaskSpec& task, const NodeView& node) const {
  return -cost(task, node) + 1e-3 * least_allocated_score(task, node);
}

}  // namespace chorus
