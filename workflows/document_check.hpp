// Checks on the parsed YAML document before any of it is read into tasks: yaml-cpp 0.7 shares an
// anchored node between its aliases, so a small file can stand for a huge tree that the readers
// would copy out piece by piece; and escapes ("\0", "\x00", "\u0000") put NUL characters into
// strings that the raw-text check cannot see.
#pragma once

#include <cstdint>

#include <yaml-cpp/yaml.h>

#include "workflows/diagnostic_list.hpp"

namespace chorus {

// Walks `root` as the readers see it (aliases expanded) and reports:
// - more than `max_bytes` in all (each scalar's bytes, plus 8 per node), at the node where the
//   walk passed the limit; the walk stops there, and each container of 1 KiB or more is walked
//   once however many aliases name it;
// - an alias inside the node it names (a cycle: the tree would be infinite);
// - every distinct scalar holding a NUL character, with the character's index.
// Returns false when it reported.
bool check_document(const YAML::Node& root, std::uint64_t max_bytes, DiagnosticList& diags);

}  // namespace chorus
