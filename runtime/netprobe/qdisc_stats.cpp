#include "runtime/netprobe/qdisc_stats.hpp"

#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstring>
#include <limits>

#include "runtime/netprobe/counter_delta.hpp"
#include "runtime/netprobe/rtnetlink.hpp"

namespace chorus::netprobe {
namespace {

using rtnl::for_each_attr;
using rtnl::read_at;

// One RTM_NEWQDISC body (tcmsg + attributes) into `q`; false if malformed.
bool decode_qdisc(const char* body, std::size_t len, QdiscCounters& q) {
  if (len < sizeof(tcmsg)) return false;
  const auto t = read_at<tcmsg>(body);
  q.ifindex = t.tcm_ifindex;
  q.handle = t.tcm_handle;
  q.parent = t.tcm_parent;
  return rtnl::for_each_attr_after(
      body, len, sizeof(tcmsg), [&](unsigned short type, const char* p, std::size_t n) {
        if (type == TCA_KIND) {
          q.kind.assign(p, strnlen(p, n));
        } else if (type == TCA_STATS2) {
          return for_each_attr(p, n, [&](unsigned short st, const char* sp, std::size_t sl) {
            if (st == TCA_STATS_BASIC && sl >= 12) {
              q.bytes = read_at<std::uint64_t>(sp);
              q.packets = read_at<std::uint32_t>(sp + 8);
            } else if (st == TCA_STATS_QUEUE && sl >= sizeof(gnet_stats_queue)) {
              const auto g = read_at<gnet_stats_queue>(sp);
              q.qlen = g.qlen;
              q.backlog = g.backlog;
              q.drops = g.drops;
            }
            return true;
          });
        }
        return true;
      });
}

// One message of a qdisc dump into `out` (other message types are skipped); false if malformed.
bool add_qdisc(const nlmsghdr& h, const char* body, std::size_t len,
               std::vector<QdiscCounters>& out) {
  if (h.nlmsg_type != RTM_NEWQDISC) return true;
  QdiscCounters q;
  if (!decode_qdisc(body, len, q)) return false;
  out.push_back(std::move(q));
  return true;
}

}  // namespace

bool decode_qdisc_messages(const char* data, std::size_t n, std::vector<QdiscCounters>& out,
                           bool& done, int& error) {
  return rtnl::for_each_message(data, n, done, error,
                                [&](const nlmsghdr& h, const char* body, std::size_t len) {
                                  return add_qdisc(h, body, len, out);
                                });
}

Result<std::vector<QdiscCounters>> dump_qdiscs() {
  auto sock = rtnl::Socket::open();
  if (!sock.ok()) return sock.status();
  tcmsg req{};
  req.tcm_family = AF_UNSPEC;
  std::vector<QdiscCounters> out;
  const Status s = sock->dump(RTM_GETQDISC, &req, sizeof req, "RTM_GETQDISC",
                              [&](const nlmsghdr& h, const char* body, std::size_t len) {
                                return add_qdisc(h, body, len, out);
                              });
  if (!s.ok()) return s;
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
