// AgentTelemetry: what an agent reports about its node at each heartbeat (the `telemetry`
// message of runtime/agent/agent_protocol.hpp), in the units of schedulers/node_facts.hpp: SI,
// bytes, seconds, bytes per second, NaN = not known. The coordinator's agents backend turns it
// into NodeFacts (runtime/backends/agents_backend.cpp).
//
// Times travel as ages (seconds before the message was sent), never as clock readings: the
// agent's and the coordinator's clocks are not the same clock.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace chorus {

struct LinkTelemetry {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double rtt_s = kNaN;  // application round trip (PING to the data server)
  double down_Bps = kNaN;
  double up_Bps = kNaN;
  double age_s = kNaN;  // since the newest of the three was measured; NaN = never
  // The kernel's minimum RTT of that TCP connection (TCP_INFO, tcp_info.hpp); below rtt_s on a
  // split path (a proxy or relay that terminates TCP on the way). Version 4.
  double tcp_rtt_s = kNaN;
};

struct AgentTelemetry {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  // Which probe_targets list `links` is indexed by (the coordinator's generation number: links
  // of an older list are not read against a newer one).
  std::uint32_t targets_generation = 0;
  double rx_Bps = kNaN;
  double tx_Bps = kNaN;
  double backlog_bytes = kNaN;
  double drops_per_s = kNaN;
  double running_cores = kNaN;
  double child_cpu = kNaN;  // CPU seconds per second
  double cpu_quota = kNaN;  // cores; NaN = no quota
  // What the node's links can carry, as the kernel knows it (netprobe::read_link_capacity:
  // shaper rates, else link speed); with rx/tx, the unused capacity. NaN = unknown.
  double rx_capacity_Bps = kNaN;
  double tx_capacity_Bps = kNaN;
  std::vector<LinkTelemetry> links;  // by SourceId of that generation's targets
};

}  // namespace chorus
