// UntilCondition: the `until:` of a repeat group, a test on a JSON file a round wrote. Read from
// YAML while loading; evaluated by RepeatGroup::until after each round (nlohmann-json stays
// inside workflows/: the expected value is kept as JSON text).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "core/status.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"

namespace chorus {

enum class Comparison : std::uint8_t { equals, not_equals, below, above };
const char* to_string(Comparison c);

struct UntilCondition {
  LocatedText file;     // may hold {round}; relative to the workflow's workdir
  std::string pointer;  // RFC 6901 JSON pointer ("" = the whole document)
  Comparison comparison = Comparison::equals;
  std::string expected_json;  // the value compared with, as JSON ("false", "0.5", "\"done\"")
};

// Reads `until: {file: F, key: /ptr, equals|not_equals|below|above: V}`. `group` names the repeat
// group in messages. nullopt when it reported a problem (no file, an invalid pointer, no or two
// comparisons, a non-number for below/above, a placeholder other than {round} in `file`).
std::optional<UntilCondition> read_until(const MapEntry& e, const std::string& group,
                                         DiagnosticList& diags);

// Whether the condition holds for round `round`. The file is `file` with {round} substituted,
// relative to `workdir` (the cwd when empty). Errors (invalid_argument / not_found): the file is
// missing or unreadable, not JSON (with its line:col), has no such key, or the value's type does
// not fit the comparison; each message starts with `where` (e.g. "repeat group 'learn'
// (wf.yaml:12)") and names the file.
Result<bool> evaluate_until(const UntilCondition& condition, int round, const std::string& workdir,
                            const std::string& where);

}  // namespace chorus
