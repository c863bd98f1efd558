#include "runtime/netprobe/link_capacity.hpp"

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "runtime/netprobe/rtnetlink.hpp"

namespace chorus::netprobe {
namespace {

using rtnl::for_each_attr;
using rtnl::read_at;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// IFF_LOWER_UP (carrier) of <linux/if.h>, which cannot be included beside glibc's <net/if.h>.
constexpr std::uint32_t kIffLowerUp = 1U << 16;

// The smaller of a shaper and a link speed; an unknown speed leaves the shaper.
double capped(double shaper, double speed) {
  if (std::isnan(shaper)) return speed;
  if (std::isnan(speed)) return shaper;
  return std::min(shaper, speed);
}

std::string attr_string(const char* p, std::size_t n) {
  return std::string(p, strnlen(p, n));
}

// One RTM_NEWLINK body (ifinfomsg + attributes); false if malformed.
bool decode_link(const char* body, std::size_t len, LinkEntry& e) {
  if (len < sizeof(ifinfomsg)) return false;
  const auto m = read_at<ifinfomsg>(body);
  e.ifindex = m.ifi_index;
  e.flags = m.ifi_flags;
  return rtnl::for_each_attr_after(
      body, len, sizeof(ifinfomsg), [&](unsigned short type, const char* p, std::size_t n) {
        if (type == IFLA_IFNAME) {
          e.name = attr_string(p, n);
        } else if (type == IFLA_LINKINFO) {
          return for_each_attr(p, n, [&](unsigned short it, const char* ip, std::size_t il) {
            if (it == IFLA_INFO_KIND) e.kind = attr_string(ip, il);
            return true;
          });
        }
        return true;
      });
}

// A 32-bit rate of a tc_ratespec, or the 64-bit attribute that overrides it.
bool read_u64(const char* p, std::size_t n, std::uint64_t& v) {
  if (n < sizeof(std::uint64_t)) return false;
  v = read_at<std::uint64_t>(p);
  return true;
}

// The rate in TCA_OPTIONS of a qdisc or class of `kind` (see TcEntry::rate_Bps); false if
// malformed.
bool decode_tc_options(const std::string& kind, bool is_class, const char* p, std::size_t n,
                       double& rate) {
  if (kind == "tbf" && !is_class) {
    std::uint64_t r = 0;
    bool have = false;
    bool have64 = false;
    const bool ok = for_each_attr(p, n, [&](unsigned short t, const char* a, std::size_t l) {
      if (t == TCA_TBF_PARMS) {
        if (l < sizeof(tc_tbf_qopt)) return false;
        if (!have64) r = read_at<tc_tbf_qopt>(a).rate.rate;
        have = true;
      } else if (t == TCA_TBF_RATE64) {
        if (!read_u64(a, l, r)) return false;
        have = have64 = true;
      }
      return true;
    });
    if (ok && have && r > 0) rate = static_cast<double>(r);
    return ok;
  }
  if (kind == "htb" && is_class) {
    std::uint64_t r = 0, c = 0;
    bool have = false, have_r64 = false, have_c64 = false;
    const bool ok = for_each_attr(p, n, [&](unsigned short t, const char* a, std::size_t l) {
      if (t == TCA_HTB_PARMS) {
        if (l < sizeof(tc_htb_opt)) return false;
        const auto o = read_at<tc_htb_opt>(a);
        if (!have_r64) r = o.rate.rate;
        if (!have_c64) c = o.ceil.rate;
        have = true;
      } else if (t == TCA_HTB_RATE64) {
        if (!read_u64(a, l, r)) return false;
        have_r64 = true;
      } else if (t == TCA_HTB_CEIL64) {
        if (!read_u64(a, l, c)) return false;
        have_c64 = true;
      }
      return true;
    });
    // A 64-bit rate without TCA_HTB_PARMS is no class the kernel sends: no rate.
    if (ok && have) rate = static_cast<double>(std::min(r, c));
    return ok;
  }
  if (kind == "cake" && !is_class) {
    return for_each_attr(p, n, [&](unsigned short t, const char* a, std::size_t l) {
      if (t == TCA_CAKE_BASE_RATE64) {
        std::uint64_t r = 0;
        if (!read_u64(a, l, r)) return false;
        rate = r > 0 ? static_cast<double>(r) : kNaN;  // 0: unlimited
      }
      return true;
    });
  }
  return true;
}

// One RTM_NEWQDISC / RTM_NEWTCLASS body (tcmsg + attributes); false if malformed.
bool decode_tc(bool is_class, const char* body, std::size_t len, TcEntry& e) {
  if (len < sizeof(tcmsg)) return false;
  const auto t = read_at<tcmsg>(body);
  e.is_class = is_class;
  e.ifindex = t.tcm_ifindex;
  e.handle = t.tcm_handle;
  e.parent = t.tcm_parent;
  const char* opts = nullptr;
  std::size_t opts_len = 0;
  const bool ok = rtnl::for_each_attr_after(body, len, sizeof(tcmsg),
                                            [&](unsigned short type, const char* p, std::size_t n) {
                                              if (type == TCA_KIND) {
                                                e.kind = attr_string(p, n);
                                              } else if (type == TCA_OPTIONS) {
                                                opts = p;
                                                opts_len = n;
                                              }
                                              return true;
                                            });
  if (!ok) return false;
  // After the walk: the options' meaning depends on the kind, wherever the kind came.
  return opts == nullptr || decode_tc_options(e.kind, is_class, opts, opts_len, e.rate_Bps);
}

bool is_tc_message(std::uint16_t type) {
  return type == RTM_NEWQDISC || type == RTM_NEWTCLASS;
}

const TcEntry* find_root_qdisc(int ifindex, const std::vector<TcEntry>& qdiscs) {
  for (const auto& q : qdiscs) {
    if (!q.is_class && q.ifindex == ifindex && q.parent == TC_H_ROOT) return &q;
  }
  return nullptr;
}

// One message of a link / tc dump into `out` (other message types are skipped); false if
// malformed. Shared by the decoders below and read_link_capacity's dumps.
bool add_link(const nlmsghdr& h, const char* body, std::size_t len, std::vector<LinkEntry>& out) {
  if (h.nlmsg_type != RTM_NEWLINK) return true;
  LinkEntry e;
  if (!decode_link(body, len, e)) return false;
  out.push_back(std::move(e));
  return true;
}

bool add_tc(const nlmsghdr& h, const char* body, std::size_t len, std::vector<TcEntry>& out) {
  if (!is_tc_message(h.nlmsg_type)) return true;
  TcEntry e;
  if (!decode_tc(h.nlmsg_type == RTM_NEWTCLASS, body, len, e)) return false;
  out.push_back(std::move(e));
  return true;
}

}  // namespace

LinkCapacity combine_link_capacity(const std::vector<InterfaceFacts>& interfaces) {
  double egress = 0, wire = 0, ifb_shapers = 0;
  bool any_link = false, any_ifb_shaper = false;
  for (const auto& f : interfaces) {
    if (!f.up || f.loopback) continue;
    if (f.ifb) {
      if (!std::isnan(f.shaper_Bps)) {
        ifb_shapers += f.shaper_Bps;
        any_ifb_shaper = true;
      }
      continue;
    }
    any_link = true;
    egress += capped(f.shaper_Bps, f.speed_Bps);  // NaN (unknown) makes the sum NaN
    wire += f.speed_Bps;
  }
  LinkCapacity c;
  if (!any_link) return c;
  c.egress_Bps = egress;
  c.ingress_Bps = any_ifb_shaper ? capped(ifb_shapers, wire) : wire;
  return c;
}

bool decode_link_messages(const char* data, std::size_t n, std::vector<LinkEntry>& out, bool& done,
                          int& error) {
  return rtnl::for_each_message(data, n, done, error,
                                [&](const nlmsghdr& h, const char* body, std::size_t len) {
                                  return add_link(h, body, len, out);
                                });
}

bool decode_tc_messages(const char* data, std::size_t n, std::vector<TcEntry>& out, bool& done,
                        int& error) {
  return rtnl::for_each_message(data, n, done, error,
                                [&](const nlmsghdr& h, const char* body, std::size_t len) {
                                  return add_tc(h, body, len, out);
                                });
}

double root_shaper_Bps(int ifindex, const std::vector<TcEntry>& qdiscs,
                       const std::vector<TcEntry>& classes) {
  const TcEntry* root = find_root_qdisc(ifindex, qdiscs);
  if (root == nullptr) return kNaN;
  if (root->kind == "tbf" || root->kind == "cake") return root->rate_Bps;
  if (root->kind != "htb") return kNaN;
  double sum = 0;
  bool any = false;
  for (const auto& c : classes) {
    if (!c.is_class || c.ifindex != ifindex || c.kind != "htb" || c.parent != TC_H_ROOT ||
        TC_H_MAJ(c.handle) != TC_H_MAJ(root->handle) || std::isnan(c.rate_Bps)) {
      continue;
    }
    sum += c.rate_Bps;
    any = true;
  }
  return any ? sum : kNaN;
}

double link_speed_Bps(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return kNaN;
  // The ioctl reaches the device through the socket's namespace: the thread's own. Any family
  // does (AF_INET as ethtool(8), AF_UNIX where IPv4 is absent); the request needs no privilege.
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return kNaN;
  // ethtool_link_settings and its link mode masks (3 x at most 127 words, the kernel says how
  // many in a first call): a word buffer, the struct copied in and out (a flexible array member
  // cannot sit inside a struct of ours).
  constexpr std::size_t kWords = sizeof(ethtool_link_settings) / sizeof(std::uint32_t) + 3 * 127;
  std::uint32_t buf[kWords] = {};
  ethtool_link_settings s{};
  s.cmd = ETHTOOL_GLINKSETTINGS;
  std::memcpy(buf, &s, sizeof s);
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, name.data(), name.size());
  ifr.ifr_data = reinterpret_cast<char*>(buf);
  double speed = kNaN;
  if (::ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
    std::memcpy(&s, buf, sizeof s);
    if (s.link_mode_masks_nwords < 0) {  // the handshake: ask again with the kernel's count
      s.link_mode_masks_nwords = static_cast<std::int8_t>(-s.link_mode_masks_nwords);
      s.cmd = ETHTOOL_GLINKSETTINGS;
      std::memset(buf, 0, sizeof buf);
      std::memcpy(buf, &s, sizeof s);
      if (::ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
        std::memcpy(&s, buf, sizeof s);
        // Mbit/s; SPEED_UNKNOWN (-1 as u32) and 0 are "the driver does not know".
        if (s.link_mode_masks_nwords > 0 && s.speed > 0 && s.speed <= 0x7fffffffU) {
          speed = s.speed * 1e6 / 8;
        }
      }
    }
  }
  ::close(fd);
  return speed;
}

Result<LinkCapacity> read_link_capacity() {
  auto sock = rtnl::Socket::open();
  if (!sock.ok()) return sock.status();

  std::vector<LinkEntry> links;
  ifinfomsg link_req{};
  link_req.ifi_family = AF_UNSPEC;
  Status s = sock->dump(RTM_GETLINK, &link_req, sizeof link_req, "RTM_GETLINK",
                        [&](const nlmsghdr& h, const char* body, std::size_t len) {
                          return add_link(h, body, len, links);
                        });
  if (!s.ok()) return s;

  std::vector<TcEntry> qdiscs;
  const auto collect = [](std::vector<TcEntry>& into) {
    return [&into](const nlmsghdr& h, const char* body, std::size_t len) {
      return add_tc(h, body, len, into);
    };
  };
  tcmsg tc_req{};
  tc_req.tcm_family = AF_UNSPEC;
  s = sock->dump(RTM_GETQDISC, &tc_req, sizeof tc_req, "RTM_GETQDISC", collect(qdiscs));
  if (!s.ok()) return s;

  std::vector<InterfaceFacts> facts;
  for (const auto& l : links) {
    InterfaceFacts f;
    f.ifindex = l.ifindex;
    f.name = l.name;
    f.up = (l.flags & IFF_UP) != 0 && (l.flags & kIffLowerUp) != 0;
    f.loopback = (l.flags & IFF_LOOPBACK) != 0;
    f.ifb = l.kind == "ifb" || (l.kind.empty() && l.name.rfind("ifb", 0) == 0);
    if (f.up && !f.loopback) {
      std::vector<TcEntry> classes;
      const TcEntry* root = find_root_qdisc(l.ifindex, qdiscs);
      if (root != nullptr && root->kind == "htb") {
        // The kernel dumps the classes of one device per request (tcm_ifindex).
        tcmsg class_req{};
        class_req.tcm_family = AF_UNSPEC;
        class_req.tcm_ifindex = l.ifindex;
        s = sock->dump(RTM_GETTCLASS, &class_req, sizeof class_req, "RTM_GETTCLASS",
                       collect(classes));
        // A device removed since the link dump (ENODEV): it carries nothing now; left out
        // like a device that is down rather than failing the whole reading.
        if (!s.ok()) f.up = false;
      }
      f.shaper_Bps = root_shaper_Bps(l.ifindex, qdiscs, classes);
      if (!f.ifb) f.speed_Bps = link_speed_Bps(l.name);
    }
    facts.push_back(std::move(f));
  }
  return combine_link_capacity(facts);
}

}  // namespace chorus::netprobe
