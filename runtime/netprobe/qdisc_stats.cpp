#include "runtime/netprobe/qdisc_stats.hpp"

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>

#include "runtime/netprobe/counter_delta.hpp"
#include "runtime/netprobe/socket_util.hpp"

namespace chorus::netprobe {
namespace {

template <typename T>
T read_at(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Walks the attributes in [p, p + n): calls f(type, payload, payload_len) for each; false on a
// length that does not fit.
template <typename F>
bool for_each_attr(const char* p, std::size_t n, F&& f) {
  while (n >= sizeof(rtattr)) {
    const auto len = read_at<unsigned short>(p + offsetof(rtattr, rta_len));
    const auto type = read_at<unsigned short>(p + offsetof(rtattr, rta_type));
    if (len < sizeof(rtattr) || len > n) return false;
    f(static_cast<unsigned short>(type & NLA_TYPE_MASK), p + RTA_LENGTH(0), len - RTA_LENGTH(0));
    const std::size_t step = RTA_ALIGN(len);
    if (step >= n) return true;
    p += step;
    n -= step;
  }
  return true;
}

}  // namespace

bool decode_qdisc_messages(const char* data, std::size_t n, std::vector<QdiscCounters>& out,
                           bool& done, int& error) {
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
    if (h.nlmsg_type == RTM_NEWQDISC) {
      if (body_len < sizeof(tcmsg)) return false;
      const auto t = read_at<tcmsg>(body);
      QdiscCounters q;
      q.ifindex = t.tcm_ifindex;
      q.handle = t.tcm_handle;
      q.parent = t.tcm_parent;
      const std::size_t attrs = NLMSG_ALIGN(sizeof(tcmsg));
      bool ok = true;
      if (body_len > attrs) {
        ok = for_each_attr(
            body + attrs, body_len - attrs,
            [&](unsigned short type, const char* p, std::size_t len) {
              if (type == TCA_KIND) {
                q.kind.assign(p, strnlen(p, len));
              } else if (type == TCA_STATS2) {
                ok = ok &&
                     for_each_attr(p, len, [&](unsigned short st, const char* sp, std::size_t sl) {
                       if (st == TCA_STATS_BASIC && sl >= 12) {
                         q.bytes = read_at<std::uint64_t>(sp);
                         q.packets = read_at<std::uint32_t>(sp + 8);
                       } else if (st == TCA_STATS_QUEUE && sl >= sizeof(gnet_stats_queue)) {
                         const auto g = read_at<gnet_stats_queue>(sp);
                         q.qlen = g.qlen;
                         q.backlog = g.backlog;
                         q.drops = g.drops;
                       }
                     });
              }
            });
      }
      if (!ok) return false;
      out.push_back(std::move(q));
    }
    const std::size_t step = NLMSG_ALIGN(h.nlmsg_len);
    if (step >= n) return true;
    data += step;
    n -= step;
  }
  return true;
}

Result<std::vector<QdiscCounters>> dump_qdiscs() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return io_error("rtnetlink socket: " + errno_text(errno));
  struct {
    nlmsghdr h;
    tcmsg t;
  } req{};
  req.h.nlmsg_len = NLMSG_LENGTH(sizeof(tcmsg));
  req.h.nlmsg_type = RTM_GETQDISC;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = 1;
  req.t.tcm_family = AF_UNSPEC;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, &req, req.h.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) <
      0) {
    const int err = errno;
    ::close(fd);
    return io_error("rtnetlink RTM_GETQDISC: " + errno_text(err));
  }
  std::vector<QdiscCounters> out;
  std::vector<char> buf(64 * 1024);
  bool done = false;
  int error = 0;
  // Bounded: a dump of a few thousand qdiscs is a few dozen datagrams.
  for (int rounds = 0; !done && rounds < 10000; ++rounds) {
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return io_error("rtnetlink dump: " + errno_text(err));
    }
    if (!decode_qdisc_messages(buf.data(), static_cast<std::size_t>(n), out, done, error)) {
      ::close(fd);
      return io_error("rtnetlink dump: a malformed qdisc message");
    }
  }
  ::close(fd);
  if (error != 0) return io_error("rtnetlink RTM_GETQDISC: " + errno_text(error));
  if (!done) return io_error("rtnetlink dump: no end of dump");
  return out;
}

Result<QdiscFigures> QdiscStats::sample(double t) {
  auto q = dump_qdiscs();
  if (!q.ok()) return q.status();
  return sample(*q, static_cast<int>(if_nametoindex("lo")), t);
}

QdiscFigures QdiscStats::sample(const std::vector<QdiscCounters>& qdiscs, int loopback_ifindex,
                                double t) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  double backlog = 0;
  std::uint64_t drops = 0;
  std::vector<Last> now;
  for (const auto& q : qdiscs) {
    if (q.parent != TC_H_ROOT || q.ifindex == loopback_ifindex) continue;
    backlog += q.backlog;
    now.push_back({q.ifindex, q.handle, q.drops});
    for (const auto& b : last_) {
      if (b.ifindex == q.ifindex && b.handle == q.handle) {
        drops += counter_delta(b.drops, q.drops);
        break;
      }
    }
  }
  QdiscFigures f{backlog, nan};
  if (have_last_ && t > last_t_) f.drops_per_s = static_cast<double>(drops) / (t - last_t_);
  last_ = std::move(now);
  last_t_ = t;
  have_last_ = true;
  return f;
}

}  // namespace chorus::netprobe
