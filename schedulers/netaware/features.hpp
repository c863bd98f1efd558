// The feature vector of one (task, candidate node) pair: what the completion-time model sees,
// what the journal keeps per attempt (the training rows of `chorus model train`) and what
// `chorus why` shows. Fixed layout, named, so a model file records the names it was trained on
// and a model trained on other features is refused by name, not misread by position.
//
// Also the analytic estimate the policy falls back to without a model (and a feature of the
// model: it learns the correction):
//   time = input / down + output / up            (bytes / measured bandwidth, per direction)
//        + rtt_from x round_trips(input) + rtt_to x round_trips(output)
//        + cpu seconds / cpu share               (share < 1 under a quota shared by tasks)
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

// TCP round trips to move `bytes` (handshake + slow start from a 10-segment window, doubling,
// until the bytes are sent); 0 for 0 bytes.
double transfer_round_trips(double bytes);

inline float feature(const FeatureVector& f, Feature which) {
  return f[static_cast<std::size_t>(which)];
}

}  // namespace chorus
