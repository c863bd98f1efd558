#include "schedulers/netaware/features.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace chorus {
namespace {

constexpr std::array<std::string_view, kFeatureCount> kNames{
    "input_mb",        "output_mb",       "cpu_s",         "down_mbps",   "rtt_from_ms",
    "up_mbps",         "rtt_to_ms",       "rx_mbps",       "tx_mbps",     "backlog_kb",
    "drops_per_s",     "running_cores",   "free_cores",    "cpu_share",   "child_cpu",
    "telemetry_age_s", "tcp_rtt_from_ms", "tcp_rtt_to_ms", "rx_cap_mbps", "tx_cap_mbps",
    "analytic_s"};

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

double transfer_s(double bytes, double bw_Bps, double rtt_s, double tcp_rtt_s) {
  if (!(bytes > 0)) return 0;
  if (std::isnan(rtt_s)) return bytes / bw_Bps;
  const double ramp_rtt = std::isnan(tcp_rtt_s) ? rtt_s : std::min(tcp_rtt_s, rtt_s);
  constexpr double kSegment = 1448;  // an Ethernet MSS with timestamps
  const double bdp = bw_Bps * ramp_rtt;
  double t = ramp_rtt + rtt_s;  // connect, then request: the first byte's two round trips
  double sent = 0;
  // A window below the bandwidth-delay product leaves the path idle for the rest of its round
  // trip: the round costs a whole TCP round trip. At most log2(bytes / 10 segments) turns: the
  // window doubles each turn and the loop ends once it covers what is left.
  for (double window = 10 * kSegment; bytes - sent > window && window < bdp; window *= 2) {
    t += ramp_rtt;
    sent += window;
  }
  return t + (bytes - sent) / bw_Bps;
}

double cpu_wall_s(double cpu_s, double share) {
  if (!(share < 1)) return cpu_s;
  const double unthrottled = std::min(cpu_s, share * kCfsPeriod_s);
  return unthrottled + (cpu_s - unthrottled) / share;
}

double expected_rate_Bps(double probed_Bps, double capacity_Bps, double rate_now_Bps) {
  if (!(capacity_Bps > 0) || std::isnan(rate_now_Bps)) return probed_Bps;
  const double free = std::max(capacity_Bps - rate_now_Bps, kMinFreeShare * capacity_Bps);
  return std::min(probed_Bps, free);
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
  set(out, Feature::tcp_rtt_from_ms, from ? from->tcp_rtt_s * 1e3 : kNaN);
  set(out, Feature::tcp_rtt_to_ms, to ? to->tcp_rtt_s * 1e3 : kNaN);
  set(out, Feature::rx_cap_mbps, facts ? mbps(facts->rx_capacity_Bps) : kNaN);
  set(out, Feature::tx_cap_mbps, facts ? mbps(facts->tx_capacity_Bps) : kNaN);
  set(out, Feature::telemetry_age_s,
      // Clamped at 0: a snapshot written in the same turn as a decision whose time was read
      // earlier is not from the future.
      reported ? std::max(0.0, std::chrono::duration<double>(now - facts->updated).count()) : kNaN);
  set(out, Feature::analytic_s, analytic_estimate_s(out));
}

double analytic_estimate_s(const FeatureVector& f) {
  const auto get = [&f](Feature which) { return static_cast<double>(feature(f, which)); };
  const auto per_s = [](double mbit) { return mbit * 1e6 / 8.0; };
  const double in = get(Feature::input_mb) * 1e6;
  const double outb = get(Feature::output_mb) * 1e6;
  double t = cpu_wall_s(get(Feature::cpu_s), get(Feature::cpu_share));
  if (in > 0) {
    const double bw =
        expected_rate_Bps(per_s(get(Feature::down_mbps)), per_s(get(Feature::rx_cap_mbps)),
                          per_s(get(Feature::rx_mbps)));
    if (!(bw > 0)) return std::numeric_limits<double>::quiet_NaN();
    t += transfer_s(in, bw, get(Feature::rtt_from_ms) / 1e3, get(Feature::tcp_rtt_from_ms) / 1e3);
  }
  if (outb > 0) {
    const double bw =
        expected_rate_Bps(per_s(get(Feature::up_mbps)), per_s(get(Feature::tx_cap_mbps)),
                          per_s(get(Feature::tx_mbps)));
    if (!(bw > 0)) return std::numeric_limits<double>::quiet_NaN();
    t += transfer_s(outb, bw, get(Feature::rtt_to_ms) / 1e3, get(Feature::tcp_rtt_to_ms) / 1e3);
  }
  return t;
}

}  // namespace chorus
