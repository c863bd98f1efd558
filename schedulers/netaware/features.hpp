// The feature vector of one (task, candidate node) pair: what the completion-time model sees,
// what the journal keeps per attempt (the training rows of `chorus model train`) and what
// `chorus why` shows. Fixed layout, named, so a model file records the names it was trained on
// and a model trained on other features is refused by name, not misread by position.
//
// Also the analytic estimate the policy falls back to without a model (and a feature of the
// model: it learns the correction):
//   time = transfer(input, bw_in, path to `from`) + transfer(output, bw_out, path to `to`)
//        + cpu wall time(cpu seconds, cpu share)
// where bw_in = min(probed down, unused receive capacity), bw_out likewise (analytic_estimate_s),
// transfer is TCP's (transfer_s) and the CPU part follows CFS bandwidth control (cpu_wall_s).
// docs/network-aware.md has the measurements behind each term.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "core/task_spec.hpp"
#include "core/units.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

enum class Feature : std::uint8_t {
  input_mb,         // the task's input, MB (1e6 bytes)
  output_mb,        // its output, MB
  cpu_s,            // its CPU seconds on an unloaded core (data.cpu, else estimate, else 0)
  down_mbps,        // probed bandwidth source -> node, Mbit/s; NaN = not known
  rtt_from_ms,      // round trip to `from`, ms; NaN = not known
  up_mbps,          // probed bandwidth node -> `to`, Mbit/s
  rtt_to_ms,        // round trip to `to`, ms
  rx_mbps,          // node interface receive rate now, Mbit/s (background traffic)
  tx_mbps,          // node interface transmit rate now, Mbit/s
  backlog_kb,       // qdisc backlog, KB
  drops_per_s,      // qdisc drops per second
  running_cores,    // cores held by tasks running there
  free_cores,       // cores free there (NodeView::free)
  cpu_share,        // share of a core the task would get (quota / demand, at most 1; 1 = none)
  child_cpu,        // CPU seconds per second its running tasks burn
  telemetry_age_s,  // how old the node's snapshot is; NaN = never reported
  tcp_rtt_from_ms,  // the TCP connection's own minimum RTT to `from` (below rtt_from_ms on a
                    // split path: a relay or proxy on the way); NaN = not known
  tcp_rtt_to_ms,    // the same to `to`
  rx_cap_mbps,      // what the node can receive, Mbit/s (shaper rate, else link speed); NaN = ?
  tx_cap_mbps,      // what it can send
  analytic_s,       // the analytic estimate below, seconds; NaN = not computable
};
inline constexpr std::size_t kFeatureCount = static_cast<std::size_t>(Feature::analytic_s) + 1;

using FeatureVector = std::array<float, kFeatureCount>;

// "input_mb", ... in Feature order: what model files list.
std::span<const std::string_view> feature_names();
std::string_view feature_name(Feature f);

// Fills `out` for `task` on `node` at `now`. NaN where the node did not report what a feature
// needs (a model's trees route missing values; the analytic estimate treats them below).
// Allocation-free: called per candidate node per decision.
void fill_features(const TaskSpec& task, const NodeView& node, TimePoint now, FeatureVector& out);

// The analytic estimate from the features already filled (no allocation). Missing bandwidth to a
// source the task reads from or writes to makes it NaN (not computable): the caller decides what
// an unknown link means. A task that moves nothing is its CPU time alone.
double analytic_estimate_s(const FeatureVector& f);

// Seconds to move `bytes` over one new TCP connection whose achievable rate is `bw_Bps`
// (bytes/s), on a path whose application round trip is `rtt_s` and whose TCP connection's own
// round trip is `tcp_rtt_s` (the same on a plain path; less where a relay or proxy terminates
// TCP on the way; NaN = take rtt_s): the handshake costs a TCP round trip and the request an
// application one before the first byte; then slow start sends a window per TCP round trip,
// from 10 segments, doubling, while the window is below the bandwidth-delay product (bw x
// tcp_rtt); from there the rest flows at bw. The latency model of Cardwell, Savage and Anderson
// (INFOCOM 2000) without losses. (Before 2026-12-04 the estimate added bytes / bw to an
// application round trip per slow-start round, charging each round twice, and at the relay's
// latency, which TCP never sees: docs/network-aware.md has the measurement.) NaN rtt_s:
// bytes / bw alone. 0 for 0 bytes; at most log2(bytes / 10 segments) loop turns, no allocation.
double transfer_s(double bytes, double bw_Bps, double rtt_s, double tcp_rtt_s);

// Wall seconds of `cpu_s` CPU seconds at a CPU share `share` (cpu_share) under CFS bandwidth
// control: a group's quota is granted per period (kCfsPeriod_s, the kernel's default, also
// Kubernetes' and Slurm's), so a task that starts on an idle group runs its first share x period
// unthrottled and the rest at `share` (measured on the bed: 25 ms of CPU in 0.03 s at a quarter
// core, 614 ms in 2.46 s). share >= 1: cpu_s.
inline constexpr double kCfsPeriod_s = 0.1;
double cpu_wall_s(double cpu_s, double share);

// The rate a new transfer can expect: the probed achievable rate, but no more than the
// unused capacity (capacity - the interface's rate) when the capacity is known, floored at
// kMinFreeShare of it. A probe of 50 ms on a link whose background comes in bursts reads a gap
// or a burst; the interface counters average over the whole interval. NaN probe: NaN.
inline constexpr double kMinFreeShare = 0.05;
double expected_rate_Bps(double probed_Bps, double capacity_Bps, double rate_now_Bps);

inline float feature(const FeatureVector& f, Feature which) {
  return f[static_cast<std::size_t>(which)];
}

}  // namespace chorus
