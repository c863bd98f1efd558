// NodeFactsSource: where the coordinator gets the nodes' facts (schedulers/node_facts.hpp) from —
// the agents' telemetry, for a backend that has agents. The coordinator calls update() on its
// own thread once per loop turn before it places tasks; the source writes only what changed
// since the last call (bumping each rewritten node's revision) and returns at once: no I/O, no
// waiting (the telemetry arrived through the launcher's sockets already).
#pragma once

#include <span>

#include "core/data_movement.hpp"
#include "core/units.hpp"
#include "schedulers/node_facts.hpp"

namespace chorus {

class NodeFactsSource {
 public:
  virtual ~NodeFactsSource() = default;
  // The run's data sources (WorkflowGraph::sources), given before the run's first task: what
  // the agents probe from now on. A later call replaces them (the next run on the same agents).
  virtual void set_probe_targets(std::span<const DataSource> sources) = 0;
  // `facts` is indexed like the backend's nodes(). Returns whether anything changed.
  virtual bool update(std::span<NodeFacts> facts, TimePoint now) = 0;
};

}  // namespace chorus
