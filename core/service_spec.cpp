#include "core/service_spec.hpp"

#include <cctype>

namespace chorus {

const char* to_string(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::tcp:
      return "tcp";
    case ProbeKind::http:
      return "http";
    case ProbeKind::stdout_regex:
      return "stdout";
    case ProbeKind::file:
      return "file";
  }
  return "?";
}

const char* to_string(RestartWhen when) {
  switch (when) {
    case RestartWhen::never:
      return "never";
    case RestartWhen::on_failure:
      return "on-failure";
    case RestartWhen::always:
      return "always";
  }
  return "?";
}

std::string service_env_name(const std::string& service) {
  std::string out = "CHORUS_SERVICE_";
  for (char c : service) {
    auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 ? static_cast<char>(std::toupper(u)) : '_';
  }
  return out;
}

}  // namespace chorus
