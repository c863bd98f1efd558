// AgentFacts: the NodeFactsSource of the agents backends — the agents' telemetry
// (AgentLauncher keeps each agent's last AgentTelemetry) written into the coordinator's
// NodeFacts between placement decisions.
//
// update() costs one integer compare when no telemetry arrived since the last call; otherwise
// it rewrites only the nodes whose agent sent something new (bumping their revision), with
// `updated` = the coordinator's `now` (the telemetry arrived in this loop turn's poll) and each
// link's `measured` = now - its age. It allocates only when a node's link list first takes the
// targets' length. A lost agent's facts are left as they were: `updated` keeps its time and a
// policy sees the age grow. Figures a hostile or broken agent sends as negative or non-finite
// become NaN (unknown).
//
// Threading: the coordinator's thread (like the AgentLauncher it reads).
#pragma once

#include <cstdint>
#include <vector>

#include "core/node_info.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/node_facts_source.hpp"

namespace chorus {

class AgentFacts final : public NodeFactsSource {
 public:
  // `nodes` are the backend's nodes() (the facts' order); both must outlive this object.
  AgentFacts(AgentLauncher& agents, const std::vector<NodeInfo>& nodes);

  void set_probe_targets(std::span<const DataSource> sources) override;
  bool update(std::span<NodeFacts> facts, TimePoint now) override;

 private:
  AgentLauncher& agents_;
  const std::vector<NodeInfo>& nodes_;
  std::uint64_t seen_serial_ = 0;           // agents_.telemetry_serial() at the last update
  std::vector<std::uint64_t> node_serial_;  // per node: the serial last written
  std::uint32_t generation_ = 0;            // the targets' generation the links are of
  std::size_t target_count_ = 0;
};

}  // namespace chorus
