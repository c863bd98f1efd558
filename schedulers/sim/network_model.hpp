// The simulator's modelled network: per node a link (bandwidth capacity and round trip) to each
// data source, a CPU quota factor, and background traffic that changes over time (a seeded
// piecewise-constant schedule per node: a new level every `period_s`). From it the simulator
//   - writes NodeFacts between decisions: what the node's telemetry would say (probed bandwidth =
//     capacity minus the background's share, with measurement noise; interface rates = the
//     background; `updated` = the node's last report, at most `cadence_s` old), and
//   - takes each data task's true runtime at its start: the TCP transfer time of the bytes at
//     the available bandwidth and the link's loaded RTT (transfer_s, a plain path), the node's
//     bandwidth shared by the transfers running there, + the CPU part under CFS bandwidth
//     control (cpu_wall_s).
// Pure and deterministic: the same model and seed give the same facts and runtimes, whatever the
// order or number of the instants asked (the noise of a report is a hash of seed, node, report).
//
// JSON description (network_json / parse_network_json):
//   {"format": "chorus-sim-network", "version": 1, "period_s": 60, "cadence_s": 5, "noise": 0.05,
//    "seed": 1, "sources": ["store0", ...],
//    "nodes": [{"cpu_factor": 1, "links": [{"mbps": 100, "rtt_ms": 5}, ...],
//               "background": [0.1, 0.6, ...]}, ...]}
// cpu_factor: the share of the node's cores its CPU quota allows (1 = no quota); background: the
// fraction of each link's capacity other traffic takes in each period (cycled past the end).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/data_movement.hpp"
#include "core/status.hpp"
#include "schedulers/node_facts.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

struct ModelLink {
  double capacity_Bps = 0;  // both directions
  double rtt_s = 0;         // unloaded round trip
};

struct ModelNode {
  double cpu_factor = 1;           // (0, 1]: quota = cpu_factor x cores; 1 = none
  std::vector<ModelLink> links;    // by SourceId, one per source
  std::vector<double> background;  // per period, fraction in [0, 0.95]
};

struct NetworkModel {
  double period_s = 60;
  double cadence_s = 5;  // telemetry reporting interval
  double noise = 0.05;   // relative standard deviation of probed bandwidth and RTT
  std::uint64_t seed = 1;
  std::vector<std::string> sources;
  std::vector<ModelNode> nodes;

  double background(std::size_t node, double t_s) const;
  // Available bandwidth node <-> source at t, before sharing among the node's transfers.
  double available_Bps(std::size_t node, SourceId source, double t_s) const;
  // Round trip under the background's queueing (grows with load: rtt x (1 + 2 x background)).
  double loaded_rtt_s(std::size_t node, SourceId source, double t_s) const;

  // True runtime of a task that starts on `node` at t: `cpu_s` on one unloaded core, moving
  // `data`; `cores` = the node's cores, `running_cores` the cores in use there including this
  // task's, `transfers` the data tasks running there including this one.
  double runtime_s(const DataMovement& data, double cpu_s, std::size_t node, double t_s, int cores,
                   double running_cores, int transfers) const;

  // Rewrites `facts` for `node` at `now_s`: the last report (links, interfaces, quota) changes
  // only when a new report is due (revision bumped then); running cores and children's CPU are the
  // node's current ones. A report sees the node's own `transfers` (data tasks running there when
  // it is written): probes get their share of what is left, and the interfaces carry them.
  void write_facts(NodeFacts& facts, std::size_t node, double now_s, int cores,
                   double running_cores, int transfers = 0) const;
};

// Errors (invalid_argument, naming `path` and the JSON path): not JSON, another format or
// version, a node without one link per source, a capacity or RTT that is not positive, a
// background level outside [0, 0.95], a cpu_factor outside (0, 1].
Result<NetworkModel> parse_network_json(std::string_view text, const std::string& path);
std::string network_json(const NetworkModel& model);

// gen:nodes=K,sources=S,bw=LO:HI,rtt=LO:HI,bg=MAX,slow=FRACTION,period=S,periods=N,seed=N
//   bw: Mbit/s, log-uniform per (node, source) link (default 10:200); rtt: ms, uniform (1:40);
//   bg: background levels uniform in [0, MAX] per node and period (0.6); slow: the fraction of
//   nodes with a CPU quota of half their cores (0.25); period: seconds per background level
//   (60); periods: the schedule's length before it cycles (60); seed (1). nodes defaults to
//   `default_nodes` (the cluster's).
Result<NetworkModel> generate_network(std::string_view spec, std::size_t default_nodes);

// in=LO:HI,out=LO:HI,seed=N (MB; input log-uniform, output uniform, 0:0 = none): gives every
// task of `w` a DataMovement from/to a seeded random source of `sources` (the task's runtime stays
// its CPU seconds). Errors: invalid_argument naming the bad key.
Status assign_data(Workload& w, std::string_view spec, std::size_t sources);

}  // namespace chorus::sim
