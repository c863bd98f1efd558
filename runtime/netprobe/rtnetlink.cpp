#include "runtime/netprobe/rtnetlink.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "runtime/netprobe/socket_util.hpp"

namespace chorus::netprobe::rtnl {

Result<Socket> Socket::open() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return io_error("rtnetlink socket: " + errno_text(errno));
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return Socket(fd);
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    seq_ = o.seq_;
    o.fd_ = -1;
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Status Socket::dump(std::uint16_t type, const void* header, std::size_t header_size,
                    const char* what, const OnMessage& on_message) {
  const std::string name = std::string("rtnetlink ") + what;
  std::vector<char> req(NLMSG_SPACE(header_size), 0);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_LENGTH(header_size));
  h.nlmsg_type = type;
  h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  h.nlmsg_seq = ++seq_;
  std::memcpy(req.data(), &h, sizeof h);
  if (header_size > 0) std::memcpy(req.data() + NLMSG_HDRLEN, header, header_size);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_, req.data(), h.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) < 0) {
    return io_error(name + ": " + errno_text(errno));
  }
  // The kernel fills a dump datagram up to 32 KiB: 64 KiB always holds one (MSG_TRUNC says if
  // not).
  std::vector<char> buf(64 * 1024);
  bool done = false;
  int error = 0;
  // Bounded: a dump of a few thousand objects is a few hundred datagrams.
  for (int rounds = 0; !done && rounds < 10000; ++rounds) {
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(name + " dump: " + errno_text(errno));
    }
    if (static_cast<std::size_t>(n) > buf.size()) {
      return io_error(name + " dump: a datagram larger than " + std::to_string(buf.size()) +
                      " bytes");
    }
    const bool ok = for_each_message(buf.data(), static_cast<std::size_t>(n), done, error,
                                     [&](const nlmsghdr& m, const char* body, std::size_t len) {
                                       if (m.nlmsg_seq != seq_)
                                         return true;  // not this request's answer (a late one)
                                       return on_message(m, body, len);
                                     });
    if (!ok) return io_error(name + " dump: a malformed message");
  }
  if (error != 0) return io_error(name + ": " + errno_text(error));
  if (!done) return io_error(name + " dump: no end of dump");
  return {};
}

}  // namespace chorus::netprobe::rtnl
