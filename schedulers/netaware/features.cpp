#include "schedulers/netaware/features.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace chorus {
namespace {

constexpr std::array<std::string_view, kFeatureCount> kNames{
    "input_mb",   "output_mb", "cpu_s",     "down_mbps",       "rtt_from_ms", "up_mbps",
    "rtt_to_ms",  "rx_mbps",   "tx_mbps",   "backlog_kb",      "drops_per_s", "running_cores",
    "free_cores", "cpu_share", "child_cpu", "telemetry_age_s", "analytic_s"};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float mbps(double bytes_per_s) {
  return static_cast<float>(bytes_per_s * 8.0 / 1e6);
}

const LinkFacts* link_of(const NodeFacts* facts, SourceId source) {
  if (facts == nullptr || source == kNoSource || source >= facts->links.size()) return nullptr;
  return &facts->links[source];
}

void set(FeatureVector& out, Feature f, float v) {
  out[static_cast<std::size_t>(f)] = v;
}
void set(FeatureVector& out, Feature f, double v) {
  set(out, f, static_cast<float>(v));
}

}  // namespace

std::span<const std::string_view> feature_names() {
  return kNames;
}

std::string_view feature_name(Feature f) {
  return kNames[static_cast<std::size_t>(f)];
}

double transfer_round_trips(double bytes) {
  if (bytes <= 0) return 0;
  constexpr double kSegment = 1448;  // an Ethernet MSS with timestamps
  constexpr double kInitialWindow = 10 * kSegment;
  // Handshake (1) + request (1) + the slow-start rounds until the sum of windows covers bytes.
  return 2.0 + std::ceil(std::log2(bytes / kInitialWindow + 1.0));
}

void fill_features(const TaskSpec& task, const NodeView& node, TimePoint now, FeatureVector& out) {
  const DataMovement& d = task.data;
  const NodeFacts* facts = node.facts;
  const double cpu = d.cpu.count() > 0 ? std::chrono::duration<double>(d.cpu).count()
                                       : std::chrono::duration<double>(task.estimate).count();
  set(out, Feature::input_mb, static_cast<double>(d.input_bytes) / 1e6);
  set(out, Feature::output_mb, static_cast<double>(d.output_bytes) / 1e6);
  set(out, Feature::cpu_s, cpu);

  const LinkFacts* from = link_of(facts, d.from);
  const LinkFacts* to = link_of(facts, d.to);
  set(out, Feature::down_mbps, from ? mbps(from->down_Bps) : kNaN);
  set(out, Feature::rtt_from_ms, from ? from->rtt_s * 1e3 : kNaN);
  set(out, Feature::up_mbps, to ? mbps(to->up_Bps) : kNaN);
  set(out, Feature::rtt_to_ms, to ? to->rtt_s * 1e3 : kNaN);

  const bool reported = facts != nullptr && facts->updated != TimePoint{};
  set(out, Feature::rx_mbps, facts ? mbps(facts->rx_Bps) : kNaN);
  set(out, Feature::tx_mbps, facts ? mbps(facts->tx_Bps) : kNaN);
  set(out, Feature::backlog_kb, facts ? facts->backlog_bytes / 1e3 : kNaN);
  set(out, Feature::drops_per_s, facts ? facts->drops_per_s : kNaN);
  // The placement's own books, not the agent's report: they are current, the report may be a
  // heartbeat old (the report's figure is still in NodeFacts for `chorus why` and the docs).
  const double running = static_cast<double>(node.info->capacity.cores - node.free.cores);
  set(out, Feature::running_cores, running);
  set(out, Feature::free_cores, static_cast<double>(node.free.cores));
  // The share of a core this task gets: a quota of q cores shared by what runs plus this task.
  double share = 1.0;
  if (facts && !std::isnan(facts->cpu_quota) && facts->cpu_quota > 0) {
    const double demand = running + std::max(1, task.total().cores);
    share = std::min(1.0, facts->cpu_quota / demand);
  }
  set(out, Feature::cpu_share, share);
  set(out, Feature::child_cpu, facts ? facts->child_cpu : kNaN);
  set(out, Feature::telemetry_age_s,
      // Clamped at 0: a snapshot written in the same turn as a decision whose time was read
      // earlier is not from the future.
      reported ? std::max(0.0, std::chrono::duration<double>(now - facts->updated).count()) : kNaN);
  set(out, Feature::analytic_s, analytic_estimate_s(out));
}

double analytic_estimate_s(const FeatureVector& f) {
  const double in = static_cast<double>(feature(f, Feature::input_mb)) * 1e6;
  const double outb = static_cast<double>(feature(f, Feature::output_mb)) * 1e6;
  double t = static_cast<double>(feature(f, Feature::cpu_s)) /
             static_cast<double>(feature(f, Feature::cpu_share));
  if (in > 0) {
    const double bw = static_cast<double>(feature(f, Feature::down_mbps)) * 1e6 / 8.0;
    if (!(bw > 0)) return std::numeric_limits<double>::quiet_NaN();
    const double rtt = static_cast<double>(feature(f, Feature::rtt_from_ms)) / 1e3;
    t += in / bw + (std::isnan(rtt) ? 0.0 : rtt * transfer_round_trips(in));
  }
  if (outb > 0) {
    const double bw = static_cast<double>(feature(f, Feature::up_mbps)) * 1e6 / 8.0;
    if (!(bw > 0)) return std::numeric_limits<double>::quiet_NaN();
    const double rtt = static_cast<double>(feature(f, Feature::rtt_to_ms)) / 1e3;
    t += outb / bw + (std::isnan(rtt) ? 0.0 : rtt * transfer_round_trips(outb));
  }
  return t;
}

}  // namespace chorus
