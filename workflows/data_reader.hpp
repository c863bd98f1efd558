// Reads the top-level `sources:` (the data sources a run may probe) and a task's (or defaults')
// `data:` (what it moves), and resolves each `from:`/`to:` name against the declared sources.
// The facts feed network-aware placement (core/data_movement.hpp, schedulers/netaware/).
//
//   sources: {store1: {address: 10.0.0.5:9000, probe: data-server}}
//   data: {input: 64MB, from: store1, output: 16MB, to: sink, cpu: 2s}
//
// Sizes are decimal (64MB = 64e6 bytes; KiB/MiB/GiB are 1024-based; a bare number is bytes:
// core/units.hpp parse_data_bytes). A task's `data:` keys override those of `defaults:` one by
// one. Every problem is a located diagnostic; reading goes on so one pass reports all of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/data_movement.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"

namespace chorus {

// `data:` as read, `from`/`to` resolved against the declared sources.
struct DataTemplate {
  DataMovement data;
  std::optional<LocatedText> from, to;  // the names as written (defaults' when inherited)
};

// The `sources:` entry (nullptr = none declared). Duplicate names are reported by the map reader.
std::vector<DataSource> read_sources(const MapEntry* entry, DiagnosticList& diags);

// `data:` of a task or of defaults (`where`: "in task 'a'", "in defaults"), starting from
// `base` (the inherited value; nullopt = none). `from`/`to` are resolved against `sources` here,
// where they are written: an undeclared name is reported at its position, listing the declared
// sources; an input without a source to read it from (or an output without `to`) is refused.
// nullopt when it is unusable (reported).
std::optional<DataTemplate> read_data(const MapEntry& e, const std::string& where,
                                      const std::optional<DataTemplate>& base,
                                      const std::vector<DataSource>& sources,
                                      DiagnosticList& diags);

}  // namespace chorus
