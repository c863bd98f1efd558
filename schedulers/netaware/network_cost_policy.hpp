// network-cost: the static network-cost baseline, in the style of Kubernetes' NetworkOverhead
// plugin (kubernetes-sigs/scheduler-plugins): a declared topology gives every node and data
// source a zone and every pair of zones a cost; a task's score on a node is minus the sum of the
// costs between the node's zone and the zones of the sources it reads from and writes to (its
// `data: {from, to}`), plus a least-allocated tie-break (x 1e-3) among nodes of equal cost, as
// NetworkOverhead runs beside the default scoring plugins. It sees the topology, never the
// traffic: congestion that comes and goes is invisible to it (the point of the comparison).
//
//   scheduler:
//     placement: network-cost
//     topology:
//       zones: {node-a: east, node-b: west, store1: east}   # nodes and sources by name
//       costs: {east-west: 10}       # symmetric; within a zone 0
//       default_cost: 100            # a pair not listed, or a node/source without a zone
//
// Source names come from the run (PolicyContext::source_names); a name in `zones` that is neither
// a source nor (at decision time) a node is simply never asked for.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"

namespace chorus {

class NetworkCostPolicy final : public PlacementPolicy {
 public:
  struct Topology {
    std::map<std::string, int, std::less<>> zone_of;  // node or source name -> zone index
    std::vector<std::string> zones;                   // by index
    std::vector<std::vector<double>> cost;            // zones x zones, symmetric, 0 on the diagonal
    double default_cost = 100;
    std::vector<int> source_zone;  // by SourceId; -1 = none
  };

  explicit NetworkCostPolicy(Topology topology) : topo_(std::move(topology)) {}

  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<PlacementPolicy>> from_args(PolicyArgs& args);

  std::string_view name() const override { return "network-cost"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec& task, const NodeView& node) const override;

  // The network cost alone of `task` on `node` (the score without the tie-break).
  double cost(const TaskSpec& task, const NodeView& node) const;

 private:
  double pair_cost(int a, int b) const;
  Topology topo_;
};

}  // namespace chorus
