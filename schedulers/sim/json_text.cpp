#include "schedulers/sim/json_text.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace chorus::sim {

std::string json_quote(std::string_view s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_number(double d) {
  if (!std::isfinite(d)) return "null";
  // %.10g rather than nlohmann's shortest round-trip form: records and metrics keep the same
  // digits and integers print without a ".0".
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", d);
  return buf;
}

}  // namespace chorus::sim
