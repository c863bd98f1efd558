#include "workflows/key_checker.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace chorus {

std::vector<MapEntry> KeyChecker::check(const YAML::Node& map, const std::string& context,
                                        DiagnosticList& diags) const {
  std::vector<MapEntry> out;
  for (MapEntry& e : map_entries(map, context, diags)) {
    if (std::find(allowed_.begin(), allowed_.end(), e.key) != allowed_.end()) {
      out.push_back(std::move(e));
      continue;
    }
    if (std::find(reserved_.begin(), reserved_.end(), e.key) != reserved_.end()) {
      diags.add(e.key_pos, "'" + e.key + "' is not supported yet");
      continue;
    }
    auto misplaced = std::find_if(misplaced_.begin(), misplaced_.end(),
                                  [&](const auto& m) { return m.first == e.key; });
    if (misplaced != misplaced_.end()) {
      diags.add(e.key_pos, misplaced->second);
      continue;
    }
    std::string hint = did_you_mean(e.key, allowed_);
    if (hint.empty()) {
      auto other = std::find_if(other_tools_.begin(), other_tools_.end(),
                                [&](const auto& m) { return m.first == e.key; });
      if (other != other_tools_.end()) hint = " (" + other->second + ")";
    }
    if (e.key == "<<")
      hint = " (YAML merge keys are not supported; repeat the values or use defaults)";
    diags.add(e.key_pos, "unknown key '" + e.key + "' " + context + hint);
  }
  return out;
}

const MapEntry* find_entry(const std::vector<MapEntry>& entries, std::string_view key) {
  for (const auto& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

}  // namespace chorus
