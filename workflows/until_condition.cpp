#include "workflows/until_condition.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "workflows/key_checker.hpp"
#include "workflows/placeholder.hpp"

namespace chorus {
namespace {

using json = nlohmann::json;

const KeyChecker& until_keys() {
  static const KeyChecker checker({"file", "key", "equals", "not_equals", "below", "above"}, {});
  return checker;
}

// A YAML scalar as the JSON value it denotes: unquoted true/false/null and numbers keep their
// type, everything else (and anything quoted) is a string.
json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (is_quoted(node)) return s;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
  if (!s.empty()) {
    const char* first = s.data() + (s.front() == '+' ? 1 : 0);
    const char* last = s.data() + s.size();
    std::int64_t i = 0;
    if (auto [p, ec] = std::from_chars(first, last, i); ec == std::errc() && p == last) return i;
    double d = 0;
    if (auto [p, ec] = std::from_chars(first, last, d);
        ec == std::errc() && p == last && std::isfinite(d))
      return d;
  }
  return s;
}

const char* type_word(const json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_null()) return "null";
  if (v.is_array()) return "a list";
  return "an object";
}

bool same_type(const json& a, const json& b) {
  return (a.is_boolean() && b.is_boolean()) || (a.is_number() && b.is_number()) ||
         (a.is_string() && b.is_string()) || (a.is_null() && b.is_null()) ||
         (a.is_array() && b.is_array()) || (a.is_object() && b.is_object());
}

}  // namespace

const char* to_string(Comparison c) {
  switch (c) {
    case Comparison::equals:
      return "equals";
    case Comparison::not_equals:
      return "not_equals";
    case Comparison::below:
      return "below";
    case Comparison::above:
      return "above";
  }
  return "?";
}

std::optional<UntilCondition> read_until(const MapEntry& e, const std::string& group,
                                         DiagnosticList& diags) {
  const std::string where = "in the 'until' of repeat group '" + group + "'";
  const std::string usage = "{file: round-{round}/metrics.json, key: /improved, equals: false}";
  if (!e.value.IsMap()) {
    diags.add(e.value_pos, "'until' of repeat group '" + group + "' must be a map such as " +
                               usage + ", got " + describe_node(e.value));
    return std::nullopt;
  }
  const std::size_t before = diags.reports();
  UntilCondition out;
  std::vector<const MapEntry*> comparisons;
  const std::vector<MapEntry> entries = until_keys().check(e.value, where, diags);
  bool has_file = false;
  for (const MapEntry& k : entries) {
    const std::string label = "'" + k.key + "' " + where;
    if (k.key == "file") {
      auto f = read_string(k, label, diags);
      if (!f) continue;
      has_file = true;
      if (f->empty()) {
        diags.add(k.value_pos, label + " must name a file");
        continue;
      }
      auto r = substitute_placeholders(*f, {{"round", "1"}}, where);
      if (!r.ok()) diags.add(k.value_pos, r.status().message());
      out.file = {*f, k.value_pos};
    } else if (k.key == "key") {
      auto p = read_string(k, label, diags);
      if (!p) continue;
      try {
        (void)json::json_pointer(*p);
        out.pointer = *p;
      } catch (const json::exception& ex) {
        std::string what = ex.what();
        auto close = what.find("] ");
        diags.add(k.value_pos, label +
                                   " is not a JSON pointer (RFC 6901, such as /metrics/0/loss): " +
                                   (close == std::string::npos ? what : what.substr(close + 2)));
      }
    } else {
      comparisons.push_back(&k);
    }
  }
  if (!has_file && find_entry(entries, "file") == nullptr) {
    diags.add(e.value_pos, "'until' of repeat group '" + group + "' has no 'file' (" + usage + ")");
  }
  if (comparisons.empty()) {
    diags.add(e.value_pos, "'until' of repeat group '" + group +
                               "' needs one comparison: equals, not_equals, below or above");
  } else if (comparisons.size() > 1) {
    diags.add(comparisons[1]->key_pos, "'until' of repeat group '" + group +
                                           "' has two comparisons ('" + comparisons[0]->key +
                                           "' and '" + comparisons[1]->key + "'); keep one");
  } else {
    const MapEntry& c = *comparisons.front();
    const std::string label = "'" + c.key + "' " + where;
    out.comparison = c.key == "equals"       ? Comparison::equals
                     : c.key == "not_equals" ? Comparison::not_equals
                     : c.key == "below"      ? Comparison::below
                                             : Comparison::above;
    if (!c.value.IsScalar()) {
      diags.add(c.value_pos, label + " must be a single value, got " + describe_node(c.value));
    } else {
      json v = scalar_to_json(c.value);
      bool ordered = out.comparison == Comparison::below || out.comparison == Comparison::above;
      if (ordered && !v.is_number()) {
        diags.add(c.value_pos, label + " must be a number, got " + describe_node(c.value));
      }
      out.expected_json = v.dump();
    }
  }
  if (diags.reports() != before) return std::nullopt;
  return out;
}

Result<bool> evaluate_until(const UntilCondition& condition, int round, const std::string& workdir,
                            const std::string& where) {
  auto name = substitute_placeholders(condition.file.text, {{"round", std::to_string(round)}});
  if (!name.ok()) return invalid_argument(where + ": until: " + name.status().message());
  std::filesystem::path path(*name);
  if (path.is_relative() && !workdir.empty()) path = std::filesystem::path(workdir) / path;
  const std::string shown = path.lexically_normal().string();
  const std::string head = where + ": until, round " + std::to_string(round) + ": ";

  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return not_found(head + "'" + shown + "' does not exist (the round's tasks must write it)");
    }
    return io_error(head + "cannot read '" + shown + "': " + std::strerror(err));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& ex) {
    auto [line, column] = line_column_of(text, ex.byte > 0 ? ex.byte - 1 : 0);
    std::string what = ex.what();
    auto colon = what.find(": ", what.find("parse error"));
    return invalid_argument(
        head + shown + ":" + std::to_string(line) + ":" + std::to_string(column) +
        ": invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const json::exception& ex) {
    return invalid_argument(head + shown + ": invalid JSON: " + ex.what());
  }

  const json expected = json::parse(condition.expected_json);
  const std::string key =
      condition.pointer.empty() ? "the document" : "key '" + condition.pointer + "'";
  const json* value = nullptr;
  try {
    json::json_pointer ptr(condition.pointer);
    if (!doc.contains(ptr)) {
      return invalid_argument(head + shown + " has no " + key);
    }
    value = &doc.at(ptr);
  } catch (const json::exception& ex) {
    // e.g. "/items/x" where items is a list: the pointer cannot apply to this document.
    std::string what = ex.what();
    auto close = what.find("] ");
    return invalid_argument(head + shown + " has no " + key + ": " +
                            (close == std::string::npos ? what : what.substr(close + 2)));
  }
  switch (condition.comparison) {
    case Comparison::equals:
    case Comparison::not_equals: {
      if (!same_type(*value, expected)) {
        return invalid_argument(head + key + " in " + shown + " is " + type_word(*value) + " (" +
                                value->dump() + "), but 'until' compares it with " +
                                type_word(expected) + " (" + expected.dump() + ")");
      }
      const bool eq = *value == expected;
      return condition.comparison == Comparison::equals ? eq : !eq;
    }
    case Comparison::below:
    case Comparison::above: {
      if (!value->is_number()) {
        return invalid_argument(head + key + " in " + shown + " is " + type_word(*value) + " (" +
                                value->dump() + "), but '" + to_string(condition.comparison) +
                                "' needs a number");
      }
      const double v = value->get<double>();
      const double x = expected.get<double>();
      return condition.comparison == Comparison::below ? v < x : v > x;
    }
  }
  return internal_error(head + "unknown comparison");
}

}  // namespace chorus
