#include "runtime/netprobe/socket_util.hpp"

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

namespace chorus::netprobe {

Result<HostPort> parse_host_port(std::string_view text) {
  const auto bad = [&](const char* why) {
    return invalid_argument("'" + std::string(text) + "' is not HOST:PORT: " + why);
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no ':PORT'");
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 address goes in brackets, [ADDR]:PORT");
  }
  int value = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value < 0 ||
      value > 65535) {
    return bad("PORT must be a number from 0 to 65535");
  }
  return HostPort{std::string(host), value};
}

std::string errno_text(int err) {
  return std::strerror(err);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return false;
  return ::fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

}  // namespace chorus::netprobe
