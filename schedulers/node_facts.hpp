// NodeFacts: what is known about a node beyond its capacity and what runs there, for the placement
// policies that want more (the network-aware issue adds telemetry: receive/transmit rates, RTT
// and bandwidth to data sources). One struct per node, owned by the ClusterState
// (schedulers/placement/cluster_state.hpp) and reached from each NodeView as `facts`, so a new
// fact is one field here: policies that do not read it are untouched, and placing a task
// allocates nothing more.
//
// Contract: whoever owns the ClusterState (the coordinator, the simulator, a test) writes the
// facts between placement decisions (ClusterState::facts(i)); policies only read them. Every
// fact must have a "not known" value (NaN, an empty optional, 0 where that cannot be a
// measurement) that a policy handles, since a node may not report it.
#pragma once

#include <cstdint>

namespace chorus {

struct NodeFacts {
  // Bumped by the owner whenever it rewrites this node's facts, so a policy that derives a score
  // from them can cache it per node and recompute only on change.
  std::uint64_t revision = 0;
};

}  // namespace chorus
