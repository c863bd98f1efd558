// KeyChecker: the keys one kind of map (top level, defaults, a task) may hold. Unknown keys are
// errors with a suggestion, never ignored; keys reserved for later versions are refused with
// "not supported yet"; keys that belong elsewhere say where.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"

namespace chorus {

class KeyChecker {
 public:
  // `allowed`: keys read by the caller. `reserved`: refused as "'x' is not supported yet".
  // `misplaced`: key -> full message (e.g. "'command' cannot be set in defaults").
  // `other_tools`: a key other workflow tools use -> what to write here instead, appended to the
  // unknown-key message when no allowed key is close ("(for a sweep, use 'foreach: ...')").
  KeyChecker(std::vector<std::string> allowed, std::vector<std::string> reserved,
             std::vector<std::pair<std::string, std::string>> misplaced = {},
             std::vector<std::pair<std::string, std::string>> other_tools = {})
      : allowed_(std::move(allowed)),
        reserved_(std::move(reserved)),
        misplaced_(std::move(misplaced)),
        other_tools_(std::move(other_tools)) {}

  // The allowed entries of `map` (a map node) in file order; every other key gets a diagnostic.
  // `context` ends messages: "unknown key 'comand' in task 'a'".
  std::vector<MapEntry> check(const YAML::Node& map, const std::string& context,
                              DiagnosticList& diags) const;

 private:
  std::vector<std::string> allowed_;
  std::vector<std::string> reserved_;
  std::vector<std::pair<std::string, std::string>> misplaced_;
  std::vector<std::pair<std::string, std::string>> other_tools_;
};

// The entry with this key, or nullptr.
const MapEntry* find_entry(const std::vector<MapEntry>& entries, std::string_view key);

}  // namespace chorus
