#include "workflows/node_reader.hpp"

#include "workflows/workflow_source.hpp"

#include <charconv>
#include <unordered_map>

namespace chorus {
namespace {

bool is_env_name(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool expect_scalar(const MapEntry& e, const std::string& label, const std::string& what,
                   DiagnosticList& diags) {
  if (e.value.IsScalar()) return true;
  diags.add(e.value_pos, label + " must be " + what + ", got " + describe_node(e.value));
  return false;
}

}  // namespace

Position position_of(const YAML::Node& node, Position fallback) {
  if (!node.IsDefined() || node.IsNull()) return fallback;
  const YAML::Mark m = node.Mark();
  if (m.line < 0 || m.column < 0) return fallback;
  return {m.line + 1, m.column + 1};
}

Position item_position(const YAML::Node& item, const DiagnosticList& diags, Position fallback) {
  if (!item.IsDefined() || !item.IsNull()) return position_of(item, fallback);
  const YAML::Mark m = item.Mark();
  const std::string_view text = diags.source();
  if (m.pos < 0 || m.line < 0 || m.column < 0 || text.empty()) return fallback;
  const auto at = static_cast<std::size_t>(m.pos);
  // A null written out (`~`, `null`, `Null`, `NULL`) is marked where it is written.
  for (std::string_view word : {"~", "null", "Null", "NULL"}) {
    if (text.compare(at, word.size(), word) != 0) continue;
    const std::size_t end = at + word.size();
    if (end == text.size() ||
        std::string_view(" \t\r\n,]}#").find(text[end]) != std::string_view::npos) {
      return {m.line + 1, m.column + 1};
    }
  }
  const Position dash = empty_item_position(text, at);
  return dash.known() ? dash : fallback;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar: {
      // Messages stay short (and hold a few kilobytes at most even for thousands of them).
      constexpr std::size_t kShown = 80;
      const std::string& text = node.Scalar();
      if (text.size() <= kShown) return "'" + text + "'";
      std::size_t cut = kShown;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
      return "'" + text.substr(0, cut) + "...' (" + std::to_string(text.size()) + " bytes)";
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "nothing";
}

bool is_quoted(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() == "!";
}

std::vector<MapEntry> map_entries(const YAML::Node& map, const std::string& context,
                                  DiagnosticList& diags) {
  std::vector<MapEntry> out;
  std::unordered_map<std::string, int> first_line;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;
    Position key_pos = position_of(key);
    if (!key.IsScalar()) {
      diags.add(key_pos, "keys must be plain words, got " + describe_node(key) + " " + context);
      continue;
    }
    auto [where, fresh] = first_line.emplace(key.Scalar(), key_pos.line);
    if (!fresh) {
      diags.add(key_pos, "duplicate key '" + key.Scalar() + "' " + context +
                             " (first set on line " + std::to_string(where->second) + ")");
      continue;
    }
    out.push_back(MapEntry{key.Scalar(), key_pos, it->second, position_of(it->second, key_pos)});
  }
  return out;
}

std::optional<std::string> read_string(const MapEntry& e, const std::string& label,
                                       DiagnosticList& diags) {
  if (!expect_scalar(e, label, "a string", diags)) return std::nullopt;
  return e.value.Scalar();
}

std::optional<std::int64_t> read_integer(const MapEntry& e, const std::string& label,
                                         std::int64_t min, std::int64_t max,
                                         DiagnosticList& diags) {
  if (!expect_scalar(e, label, "a whole number", diags)) return std::nullopt;
  const std::string& s = e.value.Scalar();
  std::int64_t v = 0;
  const char* first = s.data() + (s.starts_with('+') ? 1 : 0);
  auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (s.empty() || ec == std::errc::invalid_argument || ptr != s.data() + s.size()) {
    diags.add(e.value_pos, label + " must be a whole number, got '" + s + "'");
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    std::string range = max == INT64_MAX || max >= (std::int64_t{1} << 40)
                            ? "at least " + std::to_string(min)
                            : "between " + std::to_string(min) + " and " + std::to_string(max);
    diags.add(e.value_pos, label + " must be " + range + ", got " + s);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> read_bool(const MapEntry& e, const std::string& label, DiagnosticList& diags) {
  if (e.value.IsScalar() && !is_quoted(e.value)) {
    const std::string& s = e.value.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  diags.add(e.value_pos, label + " must be true or false, got " + describe_node(e.value));
  return std::nullopt;
}

std::optional<Duration> read_duration(const MapEntry& e, const std::string& label,
                                      DiagnosticList& diags) {
  if (!expect_scalar(e, label, "a duration such as 30s, 10m or 1h30m", diags)) return std::nullopt;
  auto d = parse_duration(e.value.Scalar());
  if (!d.ok()) {
    diags.add(e.value_pos, label + ": " + d.status().message());
    return std::nullopt;
  }
  return *d;
}

std::optional<std::int64_t> read_memory_mb(const MapEntry& e, const std::string& label,
                                           DiagnosticList& diags) {
  if (!expect_scalar(e, label, "a size such as 512M or 4G", diags)) return std::nullopt;
  auto mb = parse_memory_mb(e.value.Scalar());
  if (!mb.ok()) {
    diags.add(e.value_pos, label + ": " + mb.status().message());
    return std::nullopt;
  }
  return *mb;
}

std::optional<std::vector<LocatedText>> read_string_list(const MapEntry& e,
                                                         const std::string& label,
                                                         bool allow_single, DiagnosticList& diags) {
  std::vector<LocatedText> out;
  if (allow_single && e.value.IsScalar()) {
    out.push_back({e.value.Scalar(), e.value_pos});
    return out;
  }
  if (!e.value.IsSequence()) {
    diags.add(e.value_pos, label + " must be a list" +
                               std::string(allow_single ? " or a single value" : "") + ", got " +
                               describe_node(e.value));
    return std::nullopt;
  }
  bool ok = true;
  for (const YAML::Node& item : e.value) {
    Position pos = item_position(item, diags, e.value_pos);
    if (!item.IsScalar()) {
      diags.add(pos,
                "each item of " + label + " must be a single value, got " + describe_node(item));
      ok = false;
      continue;
    }
    out.push_back({item.Scalar(), pos});
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::pair<std::string, LocatedText>>> read_env_map(
    const MapEntry& e, const std::string& label, DiagnosticList& diags) {
  if (!e.value.IsMap()) {
    diags.add(e.value_pos, label + " must be a map of NAME: value, got " + describe_node(e.value));
    return std::nullopt;
  }
  std::vector<std::pair<std::string, LocatedText>> out;
  bool ok = true;
  for (const MapEntry& var : map_entries(e.value, "in " + label, diags)) {
    if (!is_env_name(var.key)) {
      diags.add(var.key_pos, "'" + var.key + "' in " + label +
                                 " is not a valid environment variable name (letters, digits and "
                                 "'_', not starting with a digit)");
      ok = false;
      continue;
    }
    if (!var.value.IsScalar()) {
      diags.add(var.value_pos, "the value of '" + var.key + "' in " + label +
                                   " must be a single value, got " + describe_node(var.value));
      ok = false;
      continue;
    }
    out.push_back({var.key, LocatedText{var.value.Scalar(), var.value_pos}});
  }
  if (!ok) return std::nullopt;
  return out;
}

OptionValue option_value(const YAML::Node& node, Position at, const std::string& path) {
  OptionValue v;
  v.at = {path, at.line, at.column};
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      v.text = node.Scalar();
      break;
    case YAML::NodeType::Map:
      v.kind = OptionValue::Kind::map;
      for (auto it = node.begin(); it != node.end(); ++it) {
        const Position key_at = position_of(it->first, at);
        v.items.push_back({it->first.IsScalar() ? it->first.Scalar() : std::string{},
                           {path, key_at.line, key_at.column},
                           option_value(it->second, position_of(it->second, key_at), path),
                           {}});
      }
      break;
    case YAML::NodeType::Sequence:
      v.kind = OptionValue::Kind::list;
      for (const YAML::Node& item : node) {
        v.items.push_back({{}, v.at, option_value(item, position_of(item, at), path), {}});
      }
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      v.kind = OptionValue::Kind::null;
      break;
  }
  return v;
}

}  // namespace chorus
