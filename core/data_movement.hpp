// What a task moves over the network, and the data sources a run may probe: the facts the
// network-aware placement (schedulers/netaware/) estimates a task's completion time from.
//
// Workflow files: `sources: {store1: {address: HOST:PORT}}` at the top level and
// `data: {input: 64MB, from: store1, output: 16MB, to: sink, cpu: 2s}` on a task; the C++ API
// fills the same structs. `from` and `to` name declared sources (an undeclared one is an error at
// its file:line:col).
#pragma once

#include <cstdint>
#include <string>

#include "core/units.hpp"

namespace chorus {

// Index into WorkflowGraph::sources; kNoSource = none.
using SourceId = std::uint32_t;
inline constexpr SourceId kNoSource = ~SourceId{0};

// How an agent measures its link to a source (runtime/netprobe/data_protocol.hpp).
enum class SourceProbe : std::uint8_t {
  data_server,  // a `chorus data-server`: round trip (PING) and bounded transfers (GET/PUT)
  connect,      // any TCP service: round trip as the TCP connect time only
  none,         // never probed (telemetry of the node's interfaces only)
};

struct DataSource {
  std::string name;
  std::string host;  // an address or name the nodes resolve
  int port = 0;
  SourceProbe probe = SourceProbe::data_server;
  int line = 0, column = 0;  // where it is declared (0 = built in code)
};

// Zero bytes and no source = the task moves nothing worth modelling.
struct DataMovement {
  std::uint64_t input_bytes = 0;  // read from `from` before it computes
  SourceId from = kNoSource;
  std::uint64_t output_bytes = 0;  // written to `to` after it computes
  SourceId to = kNoSource;
  // CPU time it burns on one core of an unloaded node; 0 = unknown (TaskSpec::estimate is used).
  Duration cpu{0};

  bool empty() const {
    return input_bytes == 0 && output_bytes == 0 && from == kNoSource && to == kNoSource;
  }
};

}  // namespace chorus
