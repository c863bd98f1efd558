// Typed reads of yaml-cpp nodes with positions: every failed read adds one diagnostic that names
// the key and what was expected, and returns std::nullopt. Internal to workflows/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/policy_options.hpp"
#include "core/units.hpp"
#include "workflows/diagnostic_list.hpp"

namespace chorus {

// A scalar's text and where it was written.
struct LocatedText {
  std::string text;
  Position pos;
};

// One `key: value` of a YAML map, in file order.
struct MapEntry {
  std::string key;
  Position key_pos;
  YAML::Node value;
  // Where the value is, or the key when the value is empty (yaml-cpp marks an empty value at
  // the next token, which may be lines further down).
  Position value_pos;
};

// 1-based position of a node; `fallback` when yaml-cpp has none.
Position position_of(const YAML::Node& node, Position fallback = {});

// position_of() for an item of a list, which may be empty (`-` with nothing after it: yaml-cpp
// marks that at the next token, so the '-' is found in diags.source()).
Position item_position(const YAML::Node& item, const DiagnosticList& diags, Position fallback = {});

// "a map", "a list", "a string", "nothing" — for "expected X, got Y" messages.
std::string describe_node(const YAML::Node& node);

// Whether the scalar was written in quotes (then `007` or `yes` are strings, not numbers/bools).
bool is_quoted(const YAML::Node& node);

// The entries of a map node in file order. Reports (and leaves out) keys that are not scalars and
// keys written twice (pointing at the second, naming the first's line). `context` completes
// "duplicate key 'x' <context>", e.g. "in task 'a'".
std::vector<MapEntry> map_entries(const YAML::Node& map, const std::string& context,
                                  DiagnosticList& diags);

// Readers. `label` names the thing in messages, e.g. "'cores'" or "'cores' in defaults".
std::optional<std::string> read_string(const MapEntry& e, const std::string& label,
                                       DiagnosticList& diags);
std::optional<std::int64_t> read_integer(const MapEntry& e, const std::string& label,
                                         std::int64_t min, std::int64_t max, DiagnosticList& diags);
std::optional<bool> read_bool(const MapEntry& e, const std::string& label, DiagnosticList& diags);
std::optional<Duration> read_duration(const MapEntry& e, const std::string& label,
                                      DiagnosticList& diags);
std::optional<std::int64_t> read_memory_mb(const MapEntry& e, const std::string& label,
                                           DiagnosticList& diags);
// A list of scalars; with `allow_single`, one scalar is read as a one-element list.
std::optional<std::vector<LocatedText>> read_string_list(const MapEntry& e,
                                                         const std::string& label,
                                                         bool allow_single, DiagnosticList& diags);
// A map of scalar values (env). Keys must be valid environment variable names.
std::optional<std::vector<std::pair<std::string, LocatedText>>> read_env_map(
    const MapEntry& e, const std::string& label, DiagnosticList& diags);

// A policy option's value as written (`scheduler:` keys, `quorum:` options), located in `path`.
OptionValue option_value(const YAML::Node& node, Position at, const std::string& path);

}  // namespace chorus
