#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace chorus {
namespace {

// Reads a non-negative decimal number at text[pos]; advances pos. Returns -1 when there is none.
double read_number(std::string_view text, std::size_t& pos) {
  std::size_t start = pos;
  bool digits = false;
  while (pos < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) {
    digits = digits || text[pos] != '.';
    ++pos;
  }
  if (!digits) return -1;
  std::string number(text.substr(start, pos - start));
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return -1;
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<Duration> parse_duration(std::string_view input) {
  std::string_view text = trim(input);
  auto bad = [&](const std::string& why) {
    return invalid_argument("invalid duration '" + std::string(input) + "': " + why +
                            " (use e.g. 30s, 10m, 1h30m, 250ms)");
  };
  if (text.empty()) return bad("empty");
  if (text.front() == '-') return bad("must not be negative");
  double total_s = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    double v = read_number(text, pos);
    if (v < 0) return bad("expected a number");
    std::size_t unit_start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    std::string_view unit = text.substr(unit_start, pos - unit_start);
    double scale = 0;
    if (unit.empty() || unit == "s" || unit == "sec") {
      scale = 1;
    } else if (unit == "ms") {
      scale = 1e-3;
    } else if (unit == "us") {
      scale = 1e-6;
    } else if (unit == "m" || unit == "min") {
      scale = 60;
    } else if (unit == "h") {
      scale = 3600;
    } else if (unit == "d") {
      scale = 86400;
    } else {
      return bad("unknown unit '" + std::string(unit) + "'");
    }
    if (unit.empty() && pos < text.size()) return bad("a unit is needed between numbers");
    total_s += v * scale;
  }
  if (!std::isfinite(total_s) || total_s > 1e9) return bad("too large");
  return Duration(static_cast<std::int64_t>(std::llround(total_s * 1e9)));
}

std::string format_duration(Duration d) {
  double s = std::chrono::duration<double>(d).count();
  char buf[64];
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%.0fms", s * 1e3);
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.2fs", s);
  } else if (s < 3600) {
    auto total = static_cast<long>(s);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", total / 60, total % 60);
  } else {
    auto total = static_cast<long>(s);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", total / 3600, (total / 60) % 60);
  }
  return buf;
}

namespace {
// A size's number and its unit (upper-cased, spaces dropped); the number is negative when the
// text does not start with one. Shared by memory and data sizes, which differ in their units.
double read_size(std::string_view text, std::string& unit) {
  std::size_t pos = 0;
  const double v = read_number(text, pos);
  for (; pos < text.size(); ++pos) {
    if (!std::isspace(static_cast<unsigned char>(text[pos])))
      unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[pos])));
  }
  return v;
}
}  // namespace

Result<std::int64_t> parse_memory_mb(std::string_view input) {
  std::string_view text = trim(input);
  auto bad = [&](const std::string& why) {
    return invalid_argument("invalid memory size '" + std::string(input) + "': " + why +
                            " (use e.g. 512M, 2G)");
  };
  if (text.empty()) return bad("empty");
  if (text.front() == '-') return bad("must not be negative");
  std::string unit;
  const double v = read_size(text, unit);
  if (v < 0) return bad("expected a number");
  if (unit.size() > 1 && (unit.ends_with("IB") || unit.ends_with("B"))) {
    unit.resize(unit.ends_with("IB") ? unit.size() - 2 : unit.size() - 1);
  }
  double mb = 0;
  if (unit.empty() || unit == "M") {
    mb = v;
  } else if (unit == "K") {
    mb = v / 1024;
  } else if (unit == "G") {
    mb = v * 1024;
  } else if (unit == "T") {
    mb = v * 1024 * 1024;
  } else {
    return bad("unknown unit '" + unit + "'");
  }
  if (!std::isfinite(mb) || mb > 1e12) return bad("too large");
  return static_cast<std::int64_t>(std::ceil(mb));
}

Result<std::uint64_t> parse_data_bytes(std::string_view input) {
  std::string_view text = trim(input);
  auto bad = [&](const std::string& why) {
    return invalid_argument("invalid data size '" + std::string(input) + "': " + why +
                            " (use e.g. 64MB, 1.5G, 512KiB; a bare number is bytes)");
  };
  if (text.empty()) return bad("empty");
  if (text.front() == '-') return bad("must not be negative");
  std::string unit;
  const double v = read_size(text, unit);
  if (v < 0) return bad("expected a number");
  bool binary = false;
  if (unit.size() > 2 && unit.ends_with("IB")) {
    binary = true;
    unit.resize(unit.size() - 2);
  } else if (unit.size() > 1 && unit.ends_with("B")) {
    unit.resize(unit.size() - 1);
  }
  const double k = binary ? 1024.0 : 1000.0;
  double scale = 0;
  if (unit.empty() || unit == "B") {
    scale = binary ? 0 : 1;
  } else if (unit == "K") {
    scale = k;
  } else if (unit == "M") {
    scale = k * k;
  } else if (unit == "G") {
    scale = k * k * k;
  } else if (unit == "T") {
    scale = k * k * k * k;
  }
  if (scale == 0) return bad("unknown unit '" + unit + (binary ? "iB" : "") + "'");
  const double bytes = std::ceil(v * scale);
  if (!std::isfinite(bytes) || bytes > 1e18) return bad("too large");
  return static_cast<std::uint64_t>(bytes);
}

double wall_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace chorus
