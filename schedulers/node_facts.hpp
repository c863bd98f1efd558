// NodeFacts: what is known about a node beyond its capacity and what runs there, for the placement
// policies that want more: the telemetry its agent reports (network-aware placement,
// schedulers/netaware/). One struct per node, owned by the ClusterState
// (schedulers/placement/cluster_state.hpp) and reached from each NodeView as `facts`, so a new
// fact is one field here: policies that do not read it are untouched, and placing a task
// allocates nothing more.
//
// Contract: whoever owns the ClusterState (the coordinator through a NodeFactsSource, the
// simulator from its network model, a test) writes the facts between placement decisions
// (ClusterState::facts(i)); policies only read them. Every fact has a "not known" value (NaN, an
// epoch time point, an empty vector) that a policy handles, since a node may not report it.
// Units are SI: bytes, seconds, bytes per second.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "core/units.hpp"

namespace chorus {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// The node's link to one data source (WorkflowGraph::sources), from its agent's bounded probes.
struct LinkFacts {
  double rtt_s = kUnknown;  // round trip (PING, or the TCP connect time)
  // The kernel's minimum RTT of the probing TCP connection (TCP_INFO); below rtt_s where a proxy or
  // relay terminates TCP on the way (slow start then ramps at this RTT, not at rtt_s).
  double tcp_rtt_s = kUnknown;
  double down_Bps = kUnknown;  // achievable source -> node (a timed GET); NaN = not probed
  double up_Bps = kUnknown;    // achievable node -> source (a timed PUT)
  TimePoint measured{};        // coordinator clock when the agent last measured it; epoch = never
};

struct NodeFacts {
  // Bumped by the owner whenever it rewrites this node's facts, so a policy that derives a score
  // from them can cache it per node and recompute only on change.
  std::uint64_t revision = 0;
  // Coordinator clock when the last telemetry snapshot arrived; epoch = none ever did. A policy
  // compares it with ClusterView::now to decide whether the snapshot is stale.
  TimePoint updated{};
  // The node's network interfaces (its own namespace's /proc/net/dev, loopback excluded), as
  // rates over the last reporting interval.
  double rx_Bps = kUnknown;
  double tx_Bps = kUnknown;
  // What those interfaces can carry, as the kernel knows it (shaper rates, else link speed):
  // capacity - rate is the unused capacity a new transfer can take.
  double rx_capacity_Bps = kUnknown;
  double tx_capacity_Bps = kUnknown;
  // Its qdiscs where tc reports them (summed over interfaces): bytes queued now, drops per second.
  double backlog_bytes = kUnknown;
  double drops_per_s = kUnknown;
  // Cores its agent has handed to running tasks, and the CPU seconds per second its children
  // burned over the last interval (a task that uses less or more than it asked for shows here).
  double running_cores = kUnknown;
  double child_cpu = kUnknown;
  // Cores its CPU quota allows (cgroup cpu.cfs_quota_us / cpu.cfs_period_us); NaN = no quota.
  double cpu_quota = kUnknown;
  // By SourceId; shorter than the run's sources (or empty) where a source was never probed.
  std::vector<LinkFacts> links;
};

}  // namespace chorus
