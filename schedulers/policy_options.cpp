#include "schedulers/policy_options.hpp"

#include <cmath>
#include <cstdlib>

namespace chorus {
namespace {

// The whole text is one finite number.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string option_label(const OptionEntry& entry) {
  if (!entry.key_at.in_file()) return "'" + entry.key + "'";
  return "'" + entry.key + "' in '" + (entry.section.empty() ? "scheduler" : entry.section) + "'";
}

void check_option_value(const OptionEntry& entry, OptionKind kind,
                        std::vector<OptionIssue>& issues) {
  const OptionValue& v = entry.value;
  const std::string label = option_label(entry);
  const bool scalar = v.kind == OptionValue::Kind::scalar;
  switch (kind) {
    case OptionKind::user_weights:
      if (v.kind != OptionValue::Kind::map) {
        issues.push_back({v.at, label +
                                    " must map users to numbers, such as {alice: 2, bob: 1}, "
                                    "got " +
                                    v.describe()});
        return;
      }
      for (const OptionEntry& user : v.items) {
        const OptionValue& w = user.value;
        const auto number =
            w.kind == OptionValue::Kind::scalar ? parse_number(w.text) : std::nullopt;
        if (user.key.empty()) {
          issues.push_back({w.at, "a user in '" + entry.key + "' must be a name"});
        } else if (!number || !(*number > 0)) {
          issues.push_back({w.at, "the weight of user '" + user.key +
                                      "' must be a positive number, got " + w.describe()});
        }
      }
      return;
    case OptionKind::duration:
      if (!scalar || !parse_duration(v.text).ok()) {
        issues.push_back(
            {v.at, label + " must be a duration such as 1s or 500ms, got " + v.describe()});
      }
      return;
    case OptionKind::number:
      if (!scalar || !parse_number(v.text)) {
        issues.push_back({v.at, label + " must be a number, got " + v.describe()});
      }
      return;
    case OptionKind::map:
      if (v.kind != OptionValue::Kind::map) {
        issues.push_back({v.at, label + " must be a map, got " + v.describe()});
      }
      return;
    case OptionKind::text:
      if (!scalar) {
        issues.push_back(
            {v.at, label + " must be a single value (a name or a path), got " + v.describe()});
      }
      return;
  }
}

std::optional<std::map<std::string, double>> user_weights_of(const OptionValue& value) {
  if (value.kind != OptionValue::Kind::map) return std::nullopt;
  std::map<std::string, double> out;
  for (const OptionEntry& user : value.items) {
    auto w =
        user.value.kind == OptionValue::Kind::scalar ? parse_number(user.value.text) : std::nullopt;
    if (user.key.empty() || !w || !(*w > 0)) return std::nullopt;
    out[user.key] = *w;
  }
  return out;
}

std::optional<Duration> duration_of(const OptionValue& value) {
  if (value.kind != OptionValue::Kind::scalar) return std::nullopt;
  auto d = parse_duration(value.text);
  if (!d.ok()) return std::nullopt;
  return *d;
}

std::optional<double> number_of(const OptionValue& value) {
  if (value.kind != OptionValue::Kind::scalar) return std::nullopt;
  return parse_number(value.text);
}

std::optional<std::map<std::string, double>> PolicyArgs::user_weights(std::string_view key) const {
  const OptionEntry* e = find(key);
  return e != nullptr ? user_weights_of(e->value) : std::nullopt;
}

std::optional<Duration> PolicyArgs::duration(std::string_view key) const {
  const OptionEntry* e = find(key);
  return e != nullptr ? duration_of(e->value) : std::nullopt;
}

std::optional<double> PolicyArgs::number(std::string_view key) const {
  const OptionEntry* e = find(key);
  return e != nullptr ? number_of(e->value) : std::nullopt;
}

std::optional<std::string> PolicyArgs::text(std::string_view key) const {
  const OptionEntry* e = find(key);
  if (e == nullptr || e->value.kind != OptionValue::Kind::scalar) return std::nullopt;
  return e->value.text;
}

std::optional<RuntimeSamples> PolicyArgs::history() const {
  if (!context_.history) return std::nullopt;
  return context_.history();
}

}  // namespace chorus
