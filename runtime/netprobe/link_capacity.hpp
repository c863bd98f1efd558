// LinkCapacity: what the kernel knows the links of the calling thread's network namespace can
// carry, per direction, in bytes/s.
//
// Why: the network-aware placement wants a node's unused capacity, capacity minus the rate its
// interfaces measure (interface_rates), in each direction. The rate is measured; the capacity is
// configuration the kernel holds: a shaper (a test bed's or an operator's traffic control) or
// else the link speed the driver reports.
//
// Per interface, egress: the rate of a shaper at its root qdisc: TBF (rate; TCA_TBF_RATE64 when
// present), HTB (the sum over its top-level classes, parent TC_H_ROOT, of min(rate, ceil): a
// class without a parent has nothing to borrow from, so past its rate it waits; rate == ceil in
// the usual set-up), cake (its bandwidth; 0 = unlimited). Other root qdiscs (fq_codel, noqueue,
// pfifo_fast, mq, prio, ...) do not shape: the link speed (ethtool, Mbit/s). A shaper is never
// taken above a known link speed.
//
// Ingress: an ifb device (rtnetlink link kind "ifb"; the name prefix "ifb" when the kernel gives
// no kind) receives what ingress shaping redirects to it (`tc filter ... action mirred egress
// redirect dev ifbN`): its egress shaper is the node's ingress shaper.
//
// Node figures: egress_Bps = sum over the interfaces but loopback and ifb of their egress;
// ingress_Bps = the sum of the ifb shapers' rates when an ifb has one (at most the wire's speed
// when known), else the sum of the link speeds (no ingress shaping: the wire). An unknown figure
// makes its sum unknown (NaN), except on interfaces that are not up (IFF_UP unset, or no carrier:
// IFF_LOWER_UP unset), which are left out: they carry nothing (a host's spare ifb0/ifb1, a NIC
// without a cable, whose speed reads unknown). NaN both ways when no interface is left.
//
// Everything comes from the calling thread's network namespace: rtnetlink (links, flags, kinds,
// qdiscs, classes) and the SIOCETHTOOL ioctl on a socket made by the thread (link speed), both
// follow the thread's namespace. /sys/class/net is not read: it shows the namespace of whoever
// mounted /sys, so in a namespace entered with setns(2) or `nsenter --net` (the test bed's
// agents) /sys/class/net/eth0/speed is the host's eth0, not the node's.
//
// Limits: a shaper deeper than the root (HTB under prio or under mq's per-queue children) is not
// seen: the link speed is used. HTB traffic no class matches (no default class) goes unshaped
// and is not counted. Ingress policing (a `police` action, no ifb) is not seen. Stacked devices
// (a bridge or bond and its ports, a VLAN and its NIC) each count as a link of their own. The
// link speed is what the driver says: veth reports 10000 Mbit/s, virtio and many virtual
// devices report it unknown (the figure is then NaN unless a shaper gives it).
//
// Threading: no state; each call opens and closes its own sockets. A few dumps and ioctls: meant
// for a telemetry thread about once a minute.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace chorus::netprobe {

struct LinkCapacity {
  double ingress_Bps = std::numeric_limits<double>::quiet_NaN();  // bytes/s; NaN = unknown
  double egress_Bps = std::numeric_limits<double>::quiet_NaN();   // bytes/s it can send
};

// The calling thread's network namespace's capacity (above). Errors: io_error with the OS's
// words (no rtnetlink, a malformed answer); an unreadable link speed is no error (NaN).
Result<LinkCapacity> read_link_capacity();

// ---- The pure parts, for unit tests.

struct InterfaceFacts {
  int ifindex = 0;
  std::string name;
  bool up = false;  // IFF_UP and a carrier (IFF_LOWER_UP)
  bool loopback = false;
  bool ifb = false;
  double speed_Bps = std::numeric_limits<double>::quiet_NaN();   // NaN = unknown
  double shaper_Bps = std::numeric_limits<double>::quiet_NaN();  // root shaper; NaN = none
};

LinkCapacity combine_link_capacity(const std::vector<InterfaceFacts>& interfaces);

// One link of an RTM_GETLINK dump.
struct LinkEntry {
  int ifindex = 0;
  std::string name;         // IFLA_IFNAME
  std::uint32_t flags = 0;  // ifi_flags: IFF_UP, IFF_LOWER_UP, IFF_LOOPBACK, ...
  std::string kind;         // IFLA_LINKINFO / IFLA_INFO_KIND ("veth", "ifb", ...); "" = none
};

// One qdisc (RTM_NEWQDISC) or class (RTM_NEWTCLASS) as far as capacity goes.
struct TcEntry {
  bool is_class = false;
  int ifindex = 0;
  std::uint32_t handle = 0;
  std::uint32_t parent = 0;
  std::string kind;
  // bytes/s: a TBF qdisc's rate, an HTB class's min(rate, ceil), a cake qdisc's bandwidth;
  // NaN for anything else (an HTB qdisc's rate is its classes').
  double rate_Bps = std::numeric_limits<double>::quiet_NaN();
};

// Decode one answer datagram (netlink messages back to back) of an RTM_GETLINK dump, resp. an
// RTM_GETQDISC or RTM_GETTCLASS dump, appending to `out`. False on a malformed message (a length
// past its message or attribute, a TCA_TBF_PARMS / TCA_HTB_PARMS / 64-bit rate shorter than its
// struct). `done` is set at NLMSG_DONE; an NLMSG_ERROR sets `error` to its errno.
bool decode_link_messages(const char* data, std::size_t n, std::vector<LinkEntry>& out, bool& done,
                          int& error);
bool decode_tc_messages(const char* data, std::size_t n, std::vector<TcEntry>& out, bool& done,
                        int& error);

// The egress shaper's rate of `ifindex`'s root qdisc from a qdisc dump and that interface's class
// dump (classes of other interfaces are ignored); NaN when the root does not shape (or is an HTB
// without top-level classes).
double root_shaper_Bps(int ifindex, const std::vector<TcEntry>& qdiscs,
                       const std::vector<TcEntry>& classes);

// The link speed of the interface `name` in the calling thread's namespace (SIOCETHTOOL
// ETHTOOL_GLINKSETTINGS), bytes/s; NaN when the driver does not say (SPEED_UNKNOWN, no ethtool
// support, no such interface).
double link_speed_Bps(const std::string& name);

}  // namespace chorus::netprobe
