#include "workflows/placeholder.hpp"

#include <algorithm>
#include <vector>

#include "core/text.hpp"

namespace chorus {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

bool has_braces(std::string_view text) {
  return text.find_first_of("{}") != std::string_view::npos;
}

Result<std::string> substitute_placeholders(std::string_view text, const KeyValues& vars,
                                            std::string_view context) {
  auto fail = [&](const std::string& problem, const std::string& hint) {
    std::string msg = problem;
    if (!context.empty()) msg += ' ' + std::string(context);
    return invalid_argument(msg + " (" + hint + "write '{{' and '}}' for literal braces)");
  };
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        out += '}';
        i += 2;
        continue;
      }
      return fail("'}' without a matching '{'", "");
    }
    if (c != '{') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      out += '{';
      i += 2;
      continue;
    }
    const std::size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) return fail("'{' is never closed", "");
    const std::string_view name = text.substr(i + 1, close - i - 1);
    if (!is_identifier(name)) {
      return fail("'{" + std::string(name) + "}' is not a placeholder", "");
    }
    auto var =
        std::find_if(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == name; });
    if (var == vars.end()) {
      std::vector<std::string> names;
      for (const auto& kv : vars) names.push_back(kv.first);
      std::string close_name = closest_match(name, names);
      std::string hint = !close_name.empty() ? "did you mean '{" + close_name + "}'? "
                         : names.empty()     ? "the task has no foreach variables; "
                                             : "foreach variables: " + join(names) + "; ";
      return fail("unknown placeholder '{" + std::string(name) + "}'", hint);
    }
    out += var->second;
    i = close + 1;
  }
  return out;
}

}  // namespace chorus
