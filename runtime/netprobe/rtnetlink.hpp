// Raw rtnetlink for the collectors (qdisc_stats, link_capacity): a NETLINK_ROUTE socket of the
// calling thread's network namespace that runs one dump request at a time, and bounded walkers
// over the answers (netlink messages back to back, route attributes, nested attributes).
//
// Contract of the walkers: every length is checked against what holds it (a message against the
// datagram, an attribute against its message or its enclosing attribute) before a byte is read;
// a length that does not fit makes the walk return false (the caller reports a malformed
// message), never a read past the end. Values are read with memcpy: no alignment assumed.
//
// Why no library (libmnl, libnl-route): a dump request and a few fixed kernel UAPI structs are
// a few hundred lines here, against a third-party dependency.
#pragma once

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>

#include "core/status.hpp"

namespace chorus::netprobe::rtnl {

template <typename T>
T read_at(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Walks the route attributes in [p, p + n): f(type, payload, payload_len) -> bool for each (type
// without the NLA_F_NESTED / NLA_F_NET_BYTEORDER bits). False on a length that does not fit, or
// as soon as f returns false (f's way to say a payload is malformed). Fewer than 4 bytes left
// over (padding) end the walk.
template <typename F>
bool for_each_attr(const char* p, std::size_t n, F&& f) {
  while (n >= sizeof(rtattr)) {
    const auto len = read_at<unsigned short>(p + offsetof(rtattr, rta_len));
    const auto type = read_at<unsigned short>(p + offsetof(rtattr, rta_type));
    if (len < sizeof(rtattr) || len > n) return false;
    if (!f(static_cast<unsigned short>(type & NLA_TYPE_MASK), p + RTA_LENGTH(0),
           static_cast<std::size_t>(len - RTA_LENGTH(0)))) {
      return false;
    }
    const std::size_t step = RTA_ALIGN(len);
    if (step >= n) return true;
    p += step;
    n -= step;
  }
  return true;
}

// Walks the attributes that follow a fixed family header of `header_size` bytes (ifinfomsg,
// tcmsg) in a message body of `len` bytes. False when the body is shorter than the header or an
// attribute does not fit.
template <typename F>
bool for_each_attr_after(const char* body, std::size_t len, std::size_t header_size, F&& f) {
  if (len < header_size) return false;
  const std::size_t start = NLMSG_ALIGN(header_size);
  if (len <= start) return true;
  return for_each_attr(body + start, len - start, std::forward<F>(f));
}

// Walks the netlink messages of one answer datagram [data, data + n): f(header, body, body_len)
// -> bool for each message that is neither NLMSG_DONE nor NLMSG_ERROR. `done` is set at
// NLMSG_DONE or NLMSG_ERROR; an NLMSG_ERROR sets `error` to its errno (0 for an ACK). False on
// a message length that does not fit, a short NLMSG_ERROR, or f returning false.
template <typename F>
bool for_each_message(const char* data, std::size_t n, bool& done, int& error, F&& f) {
  while (n >= sizeof(nlmsghdr)) {
    const auto h = read_at<nlmsghdr>(data);
    if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > n) return false;
    const char* body = data + NLMSG_HDRLEN;
    const std::size_t body_len = h.nlmsg_len - std::min<std::size_t>(h.nlmsg_len, NLMSG_HDRLEN);
    if (h.nlmsg_type == NLMSG_DONE) {
      done = true;
      return true;
    }
    if (h.nlmsg_type == NLMSG_ERROR) {
      if (body_len < sizeof(int)) return false;
      error = -read_at<int>(body);
      done = true;
      return true;
    }
    if (!f(h, body, body_len)) return false;
    const std::size_t step = NLMSG_ALIGN(h.nlmsg_len);
    if (step >= n) return true;
    data += step;
    n -= step;
  }
  return true;
}

// A NETLINK_ROUTE socket, opened in the calling thread's network namespace (a socket keeps the
// namespace it was made in). Move-only; closed when it dies. Not for two threads at once.
class Socket {
 public:
  // Errors: io_error "rtnetlink socket: <the OS's words>".
  static Result<Socket> open();

  Socket(Socket&& o) noexcept : fd_(o.fd_), seq_(o.seq_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  using OnMessage = std::function<bool(const nlmsghdr&, const char* body, std::size_t len)>;

  // Sends a dump request (`type` = RTM_GETLINK, RTM_GETQDISC, ...; `header` = its family header,
  // e.g. a tcmsg with tcm_ifindex set) and passes each answer message of this request to
  // `on_message` until NLMSG_DONE; false from on_message = malformed. Each receive waits at most
  // 2 s. Errors name `what` (e.g. "RTM_GETQDISC"): io_error with the OS's words, the kernel's
  // NLMSG_ERROR, "a malformed message", or no end of dump. After an error, open a new socket
  // (the rest of the failed dump may still be queued on this one).
  Status dump(std::uint16_t type, const void* header, std::size_t header_size, const char* what,
              const OnMessage& on_message);

 private:
  explicit Socket(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::uint32_t seq_ = 0;
};

}  // namespace chorus::netprobe::rtnl
