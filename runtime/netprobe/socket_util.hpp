// Small socket helpers shared by the data server, its client and the probes: HOST:PORT parsing,
// errno text, a monotonic clock in seconds. Nothing here blocks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace chorus::netprobe {

struct HostPort {
  std::string host;
  int port = 0;
};

// "HOST:PORT", "[v6]:PORT" or ":PORT" (= every address). PORT is 0..65535 (0 = ephemeral where
// the caller binds). Errors name the text and what is wrong with it.
Result<HostPort> parse_host_port(std::string_view text);

std::string errno_text(int err);

// Seconds on the steady clock (for timing transfers).
double steady_seconds();

// Makes `fd` non-blocking and close-on-exec; false with errno set on failure.
bool set_nonblocking(int fd);

}  // namespace chorus::netprobe
