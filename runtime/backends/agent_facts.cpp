#include "runtime/backends/agent_facts.hpp"

#include <chrono>
#include <cmath>

namespace chorus {
namespace {

// A figure as the policies may use it: finite and not negative, else unknown.
double sane(double v) {
  return std::isfinite(v) && v >= 0 ? v : kUnknown;
}

}  // namespace

AgentFacts::AgentFacts(AgentLauncher& agents, const std::vector<NodeInfo>& nodes)
    : agents_(agents), nodes_(nodes) {}

void AgentFacts::set_probe_targets(std::span<const DataSource> sources) {
  agents_.set_probe_targets(sources);
  target_count_ = sources.size();
}

bool AgentFacts::update(std::span<NodeFacts> facts, TimePoint now) {
  const std::uint32_t generation = agents_.probe_generation();
  const bool new_targets = generation != generation_;
  if (!new_targets && agents_.telemetry_serial() == seen_serial_) return false;
  seen_serial_ = agents_.telemetry_serial();
  if (node_serial_.size() != nodes_.size()) node_serial_.assign(nodes_.size(), 0);
  bool changed = false;
  if (new_targets) {
    // Links are indexed by the old list's SourceIds: forget them.
    generation_ = generation;
    for (std::size_t i = 0; i < facts.size() && i < nodes_.size(); ++i) {
      if (facts[i].links.empty()) continue;
      facts[i].links.clear();
      ++facts[i].revision;
      changed = true;
    }
  }
  for (std::size_t i = 0; i < facts.size() && i < nodes_.size(); ++i) {
    const auto t = agents_.node_telemetry(nodes_[i].name);
    if (t.last == nullptr || t.serial == node_serial_[i]) continue;
    node_serial_[i] = t.serial;
    const AgentTelemetry& a = *t.last;
    NodeFacts& f = facts[i];
    f.updated = now;
    f.rx_Bps = sane(a.rx_Bps);
    f.tx_Bps = sane(a.tx_Bps);
    f.backlog_bytes = sane(a.backlog_bytes);
    f.drops_per_s = sane(a.drops_per_s);
    f.running_cores = sane(a.running_cores);
    f.child_cpu = sane(a.child_cpu);
    f.cpu_quota = sane(a.cpu_quota);
    f.rx_capacity_Bps = sane(a.rx_capacity_Bps);
    f.tx_capacity_Bps = sane(a.tx_capacity_Bps);
    if (a.targets_generation == generation_ && generation_ != 0) {
      const std::size_t n = std::min(a.links.size(), target_count_);
      if (f.links.size() != n) f.links.resize(n);
      for (std::size_t k = 0; k < n; ++k) {
        const LinkTelemetry& l = a.links[k];
        LinkFacts& out = f.links[k];
        out.rtt_s = sane(l.rtt_s);
        out.tcp_rtt_s = sane(l.tcp_rtt_s);
        out.down_Bps = sane(l.down_Bps);
        out.up_Bps = sane(l.up_Bps);
        const double age = sane(l.age_s);
        out.measured = std::isnan(age)
                           ? TimePoint{}
                           : now - std::chrono::duration_cast<Duration>(
                                       std::chrono::duration<double>(std::min(age, 1e6)));
      }
    }
    ++f.revision;
    changed = true;
  }
  return changed;
}

}  // namespace chorus
