#include "runtime/netprobe/tcp_info.hpp"

// <linux/tcp.h>, not glibc's <netinet/tcp.h>: glibc's struct tcp_info stops before
// tcpi_min_rtt. The two headers cannot share a translation unit, hence this file.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <limits>

namespace chorus::netprobe {

double tcp_min_rtt_seconds(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_min_rtt) + sizeof info.tcpi_min_rtt || info.tcpi_min_rtt == 0 ||
      info.tcpi_min_rtt == ~0U) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return info.tcpi_min_rtt * 1e-6;
}

}  // namespace chorus::netprobe
