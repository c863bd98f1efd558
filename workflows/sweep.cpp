#include "workflows/sweep.hpp"

#include <cctype>
#include <charconv>
#include <limits>

namespace chorus {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Number of values of range(a, b, step); 0 when empty. Exact over the whole int64 range.
std::uint64_t range_count(std::int64_t a, std::int64_t b, std::int64_t step) {
  if (step > 0 && b > a) {
    auto diff = static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
    auto s = static_cast<std::uint64_t>(step);
    return diff / s + (diff % s != 0 ? 1 : 0);
  }
  if (step < 0 && a > b) {
    auto diff = static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b);
    auto s = static_cast<std::uint64_t>(-(step + 1)) + 1;  // |step| without overflow
    return diff / s + (diff % s != 0 ? 1 : 0);
  }
  return 0;
}

}  // namespace

Result<std::vector<std::string>> expand_range(std::string_view text, std::uint64_t max_values) {
  const std::string shown(text);
  const std::string usage = " (write \"range(start, stop)\" or \"range(start, stop, step)\")";
  std::string_view s = trim(text);
  if (!s.starts_with("range")) return invalid_argument("'" + shown + "' is not a range" + usage);
  s = trim(s.substr(5));
  if (!s.starts_with('(') || !s.ends_with(')')) {
    return invalid_argument("'" + shown + "' is not a range" + usage);
  }
  s = s.substr(1, s.size() - 2);
  std::vector<std::int64_t> args;
  while (true) {
    std::size_t comma = s.find(',');
    std::string_view part = trim(s.substr(0, comma));
    std::int64_t v = 0;
    const char* first = part.data() + (part.starts_with('+') ? 1 : 0);
    auto [ptr, ec] = std::from_chars(first, part.data() + part.size(), v);
    if (part.empty() || ec != std::errc{} || ptr != part.data() + part.size()) {
      if (ec == std::errc::result_out_of_range) {
        return invalid_argument("range bound '" + std::string(part) + "' in '" + shown +
                                "' is out of range");
      }
      return invalid_argument("range bounds must be whole numbers, got '" + std::string(part) +
                              "' in '" + shown + "'");
    }
    args.push_back(v);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  if (args.size() < 2 || args.size() > 3) {
    return invalid_argument("'" + shown + "' needs 2 or 3 numbers" + usage);
  }
  const std::int64_t step = args.size() == 3 ? args[2] : 1;
  if (step == 0) return invalid_argument("the step of '" + shown + "' must not be 0");
  const std::uint64_t count = range_count(args[0], args[1], step);
  if (count == 0) {
    return invalid_argument("'" + shown + "' is empty" +
                            (step > 0 ? " (stop must be greater than start)"
                                      : " (with a negative step, stop must be less than start)"));
  }
  if (count > max_values) {
    return invalid_argument("'" + shown + "' has " + std::to_string(count) +
                            " values, more than the limit of " + std::to_string(max_values) +
                            " tasks per workflow");
  }
  std::vector<std::string> out;
  out.reserve(count);
  std::int64_t v = args[0];
  for (std::uint64_t i = 0; i < count; ++i) {
    out.push_back(std::to_string(v));
    if (i + 1 < count) v += step;  // never steps past the last value, so never overflows
  }
  return out;
}

Status check_sweep_value(std::string_view value) {
  if (value.empty()) return invalid_argument("foreach values must not be empty");
  for (char c : value) {
    if (c == '/' || c == '[' || c == ']' || c == ',' || c == '=' ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return invalid_argument("foreach value '" + std::string(value) +
                              "' cannot be part of a task name (no '/', '[', ']', ',', '=' or "
                              "control characters; sweep over an index and look the value up)");
    }
  }
  return {};
}

std::uint64_t sweep_size(const std::vector<SweepVariable>& vars) {
  std::uint64_t n = 1;
  for (const auto& v : vars) {
    const std::uint64_t k = v.values.size();
    if (k != 0 && n > std::numeric_limits<std::uint64_t>::max() / k) {
      return std::numeric_limits<std::uint64_t>::max();
    }
    n *= k;
  }
  return n;
}

KeyValues sweep_member(const std::vector<SweepVariable>& vars, std::uint64_t index) {
  KeyValues out(vars.size());
  for (std::size_t i = vars.size(); i-- > 0;) {
    const std::uint64_t k = vars[i].values.size();
    out[i] = {vars[i].name, vars[i].values[index % k]};
    index /= k;
  }
  return out;
}

std::string member_name(std::string_view base, const KeyValues& bindings) {
  std::string out(base);
  out += '[';
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    if (i > 0) out += ',';
    out += bindings[i].first;
    out += '=';
    out += bindings[i].second;
  }
  out += ']';
  return out;
}

}  // namespace chorus
