// The node's link capacity (runtime/netprobe/link_capacity): the combination rules on facts, the
// decoders on netlink messages built here (and every truncation of them), and the real kernel in
// namespaces made here: an HTB on a veth, an ifb with a TBF for ingress, the test bed's layout,
// and a namespace with no shaper (the veth's ethtool speed).

#include <doctest/doctest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/netprobe/link_capacity.hpp"
#include "support/net_namespace.hpp"

using namespace chorus;
using namespace chorus::netprobe;
using chorus::test::NamespacePair;
using chorus::test::NetnsThread;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

InterfaceFacts up_link(const std::string& name, double speed, double shaper = kNaN) {
  InterfaceFacts f;
  f.name = name;
  f.up = true;
  f.speed_Bps = speed;
  f.shaper_Bps = shaper;
  return f;
}

// A netlink message built by hand: header, family header, attributes, nested attributes.
class Msg {
 public:
  Msg(std::uint16_t type, const void* family_header, std::size_t size) {
    b_.reserve(1024);  // (one block: GCC 12 sees false bounds errors in the vector's regrowth)
    nlmsghdr h{};
    h.nlmsg_type = type;
    append(&h, sizeof h);
    append(family_header, size);
  }
  Msg& attr(std::uint16_t type, const void* data, std::size_t len) {
    rtattr a{};
    a.rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    a.rta_type = type;
    append(&a, sizeof a);
    append(data, len);
    return *this;
  }
  Msg& str(std::uint16_t type, const std::string& s) { return attr(type, s.c_str(), s.size() + 1); }
  Msg& u64(std::uint16_t type, std::uint64_t v) { return attr(type, &v, sizeof v); }
  Msg& begin(std::uint16_t type) {
    nests_.push_back(b_.size());
    return attr(type, nullptr, 0);
  }
  Msg& end() {
    const std::size_t at = nests_.back();
    nests_.pop_back();
    const auto len = static_cast<unsigned short>(b_.size() - at);
    std::memcpy(b_.data() + at, &len, sizeof len);
    return *this;
  }
  std::vector<char> bytes() const {
    std::vector<char> out = b_;
    const auto len = static_cast<std::uint32_t>(out.size());
    std::memcpy(out.data(), &len, sizeof len);
    return out;
  }

 private:
  void append(const void* p, std::size_t n) {
    const std::size_t at = b_.size();
    b_.resize(NLMSG_ALIGN(at + n), 0);
    if (n > 0) std::memcpy(b_.data() + at, p, n);
  }
  std::vector<char> b_;
  std::vector<std::size_t> nests_;
};

std::vector<char> done_message() {
  nlmsghdr h{};
  h.nlmsg_len = NLMSG_LENGTH(sizeof(int));
  h.nlmsg_type = NLMSG_DONE;
  std::vector<char> out(NLMSG_SPACE(sizeof(int)), 0);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

tcmsg tc_header(int ifindex, std::uint32_t handle, std::uint32_t parent) {
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = ifindex;
  t.tcm_handle = handle;
  t.tcm_parent = parent;
  return t;
}

std::vector<char> tbf_qdisc(int ifindex, std::uint32_t rate, std::optional<std::uint64_t> rate64) {
  const tcmsg t = tc_header(ifindex, 0x80010000U, TC_H_ROOT);
  tc_tbf_qopt o{};
  o.rate.rate = rate;
  o.limit = 30000;
  o.buffer = 1000;
  Msg m(RTM_NEWQDISC, &t, sizeof t);
  m.str(TCA_KIND, "tbf").begin(TCA_OPTIONS).attr(TCA_TBF_PARMS, &o, sizeof o);
  if (rate64) m.u64(TCA_TBF_RATE64, *rate64);
  return m.end().bytes();
}

std::vector<char> htb_class(int ifindex, std::uint32_t classid, std::uint32_t parent,
                            std::uint32_t rate, std::uint32_t ceil,
                            std::optional<std::uint64_t> rate64 = std::nullopt,
                            std::optional<std::uint64_t> ceil64 = std::nullopt) {
  const tcmsg t = tc_header(ifindex, classid, parent);
  tc_htb_opt o{};
  o.rate.rate = rate;
  o.ceil.rate = ceil;
  o.quantum = 1500;
  Msg m(RTM_NEWTCLASS, &t, sizeof t);
  m.str(TCA_KIND, "htb").begin(TCA_OPTIONS).attr(TCA_HTB_PARMS, &o, sizeof o);
  if (rate64) m.u64(TCA_HTB_RATE64, *rate64);
  if (ceil64) m.u64(TCA_HTB_CEIL64, *ceil64);
  return m.end().bytes();
}

std::vector<char> link_message(int ifindex, const std::string& name, unsigned flags,
                               const std::string& kind) {
  ifinfomsg i{};
  i.ifi_family = AF_UNSPEC;
  i.ifi_index = ifindex;
  i.ifi_flags = flags;
  Msg m(RTM_NEWLINK, &i, sizeof i);
  m.str(IFLA_IFNAME, name);
  if (!kind.empty()) m.begin(IFLA_LINKINFO).str(IFLA_INFO_KIND, kind).end();
  return m.bytes();
}

std::vector<char> concat(std::vector<char> a, const std::vector<char>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Decodes `bytes` from a heap block of exactly their size (an over-read is an ASan error).
bool decode_tc(const std::vector<char>& bytes, std::vector<TcEntry>& out) {
  std::unique_ptr<char[]> exact(new char[bytes.size()]);
  std::memcpy(exact.get(), bytes.data(), bytes.size());
  bool done = false;
  int error = 0;
  return decode_tc_messages(exact.get(), bytes.size(), out, done, error);
}

bool decode_links(const std::vector<char>& bytes, std::vector<LinkEntry>& out) {
  std::unique_ptr<char[]> exact(new char[bytes.size()]);
  std::memcpy(exact.get(), bytes.data(), bytes.size());
  bool done = false;
  int error = 0;
  return decode_link_messages(exact.get(), bytes.size(), out, done, error);
}

// Every cut of `msg` with nlmsg_len saying the cut: refused, or (cut on an attribute's
// boundary) a valid shorter message. Never a read past the end. Returns the refusals.
template <typename Decode>
int cuts_refused(const std::vector<char>& msg, Decode decode) {
  int refused = 0;
  for (std::size_t cut = 1; cut < msg.size(); ++cut) {
    std::vector<char> part(msg.begin(), msg.begin() + static_cast<std::ptrdiff_t>(cut));
    if (cut >= sizeof(std::uint32_t)) {
      const auto len = static_cast<std::uint32_t>(cut);
      std::memcpy(part.data(), &len, sizeof len);
    }
    if (!decode(part)) ++refused;
    // The original length in a cut buffer: always refused.
    if (cut >= sizeof(nlmsghdr)) {
      std::memcpy(part.data(), msg.data(), sizeof(std::uint32_t));
      CHECK_FALSE(decode(part));
    }
  }
  return refused;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return in ? s : "(unreadable)";
}

struct Measured {
  bool ran = false;
  std::optional<Result<LinkCapacity>> cap;
  double veth_speed = kNaN;
  std::string sysfs_speed;
};

// read_link_capacity() and the veth's speed from a thread inside `netns`.
Measured measure_in(const std::string& netns, const std::string& veth) {
  Measured m;
  NetnsThread t(netns, [&] {
    m.ran = true;
    m.cap.emplace(read_link_capacity());
    m.veth_speed = link_speed_Bps(veth);
    m.sysfs_speed = read_text("/sys/class/net/" + veth + "/speed");
  });
  t.join();
  return m;
}

// `dev`'s ingress redirected to `ifb` (`in_ns`: the "ip netns exec NS " prefix), as ingress
// shaping does it.
void redirect_ingress(const std::string& in_ns, const std::string& dev, const std::string& ifb) {
  REQUIRE(test::sh(in_ns + "tc qdisc add dev " + dev + " handle ffff: ingress"));
  REQUIRE(test::sh(in_ns + "tc filter add dev " + dev +
                   " parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect "
                   "dev " +
                   ifb));
}

}  // namespace

TEST_CASE("Runtime.LinkCapacity.CombineLeavesLoopbackAndDownInterfacesOut") {
  auto lo = up_link("lo", kNaN);
  lo.loopback = true;
  auto down = up_link("eth1", kNaN);  // a NIC without a cable: speed unknown, but not up
  down.up = false;
  const auto c = combine_link_capacity({lo, up_link("eth0", 125e6), down});
  CHECK(c.egress_Bps == doctest::Approx(125e6));
  CHECK(c.ingress_Bps == doctest::Approx(125e6));
  // Two links add up; a shaper on one is its egress.
  const auto two = combine_link_capacity({up_link("eth0", 125e6, 1e6), up_link("eth1", 1.25e9)});
  CHECK(two.egress_Bps == doctest::Approx(1e6 + 1.25e9));
  CHECK(two.ingress_Bps == doctest::Approx(125e6 + 1.25e9));
}

TEST_CASE("Runtime.LinkCapacity.CombineIfbShaperIsTheIngress") {
  auto ifb = up_link("ifb0", kNaN, 2.5e6);
  ifb.ifb = true;
  auto spare = up_link("ifb1", kNaN);  // an ifb without a shaper: nothing
  spare.ifb = true;
  auto c = combine_link_capacity({up_link("eth0", 1.25e9, 3.75e6), ifb, spare});
  CHECK(c.egress_Bps == doctest::Approx(3.75e6));  // the ifb's shaper is not egress
  CHECK(c.ingress_Bps == doctest::Approx(2.5e6));
  // Two ifbs add up; the wire's speed unknown leaves the shapers.
  auto ifb2 = up_link("ifb2", kNaN, 1e6);
  ifb2.ifb = true;
  c = combine_link_capacity({up_link("eth0", kNaN, 3.75e6), ifb, ifb2});
  CHECK(c.egress_Bps == doctest::Approx(3.75e6));
  CHECK(c.ingress_Bps == doctest::Approx(3.5e6));
  // A shaper never reads above a known wire.
  c = combine_link_capacity({up_link("eth0", 1e6, 3.75e6), ifb});
  CHECK(c.egress_Bps == doctest::Approx(1e6));
  CHECK(c.ingress_Bps == doctest::Approx(1e6));
  // An ifb that is down shapes nothing.
  ifb.up = false;
  c = combine_link_capacity({up_link("eth0", 1.25e9), ifb});
  CHECK(c.ingress_Bps == doctest::Approx(1.25e9));
}

TEST_CASE("Runtime.LinkCapacity.CombineUnknownMakesNaNAndNoInterfaceIsNaN") {
  auto c = combine_link_capacity({up_link("eth0", 125e6), up_link("eth1", kNaN)});
  CHECK(std::isnan(c.egress_Bps));
  CHECK(std::isnan(c.ingress_Bps));
  // The unknown speed's link shaped: egress known, ingress (the wire) not.
  c = combine_link_capacity({up_link("eth0", 125e6), up_link("eth1", kNaN, 1e6)});
  CHECK(c.egress_Bps == doctest::Approx(126e6));
  CHECK(std::isnan(c.ingress_Bps));
  CHECK(std::isnan(combine_link_capacity({}).egress_Bps));
  CHECK(std::isnan(combine_link_capacity({}).ingress_Bps));
  auto lo = up_link("lo", 1e9);
  lo.loopback = true;
  auto ifb = up_link("ifb0", kNaN, 2.5e6);
  ifb.ifb = true;
  c = combine_link_capacity({lo, ifb});  // only loopback and an ifb: no link
  CHECK(std::isnan(c.egress_Bps));
  CHECK(std::isnan(c.ingress_Bps));
}

TEST_CASE("Runtime.LinkCapacity.DecodesTbfQdiscsAndTheirRootShaper") {
  std::vector<TcEntry> q;
  REQUIRE(decode_tc(concat(tbf_qdisc(3, 2'500'000, std::nullopt), done_message()), q));
  REQUIRE(q.size() == 1);
  CHECK_FALSE(q[0].is_class);
  CHECK(q[0].ifindex == 3);
  CHECK(q[0].parent == TC_H_ROOT);
  CHECK(q[0].kind == "tbf");
  CHECK(q[0].rate_Bps == 2'500'000);
  CHECK(root_shaper_Bps(3, q, {}) == 2'500'000);
  CHECK(std::isnan(root_shaper_Bps(4, q, {})));  // no qdisc on 4: no shaper
  // Past 4 GB/s the 64-bit rate holds it (the 32-bit one saturates).
  q.clear();
  REQUIRE(decode_tc(tbf_qdisc(3, 0xffffffffU, 10'000'000'000ULL), q));
  CHECK(q[0].rate_Bps == 1e10);
  // A root that does not shape, and a TBF under another root: no shaper.
  const tcmsg fq = tc_header(5, 0, TC_H_ROOT);
  const tcmsg inner = tc_header(6, 0x00200000U, 0x00010001U);
  tc_tbf_qopt o{};
  o.rate.rate = 1000;
  q.clear();
  REQUIRE(decode_tc(concat(Msg(RTM_NEWQDISC, &fq, sizeof fq).str(TCA_KIND, "fq_codel").bytes(),
                           Msg(RTM_NEWQDISC, &inner, sizeof inner)
                               .str(TCA_KIND, "tbf")
                               .begin(TCA_OPTIONS)
                               .attr(TCA_TBF_PARMS, &o, sizeof o)
                               .end()
                               .bytes()),
                    q));
  REQUIRE(q.size() == 2);
  CHECK(std::isnan(root_shaper_Bps(5, q, {})));
  CHECK(std::isnan(root_shaper_Bps(6, q, {})));
  // cake: its bandwidth, 0 = unlimited.
  const tcmsg cake = tc_header(7, 0x80020000U, TC_H_ROOT);
  q.clear();
  REQUIRE(decode_tc(Msg(RTM_NEWQDISC, &cake, sizeof cake)
                        .str(TCA_KIND, "cake")
                        .begin(TCA_OPTIONS)
                        .u64(TCA_CAKE_BASE_RATE64, 1'250'000)
                        .end()
                        .bytes(),
                    q));
  CHECK(root_shaper_Bps(7, q, {}) == 1'250'000);
}

TEST_CASE("Runtime.LinkCapacity.DecodesHtbClassesAndSumsTheTopLevelOnes") {
  const tcmsg root = tc_header(3, 0x00010000U, TC_H_ROOT);
  std::vector<TcEntry> q;
  REQUIRE(decode_tc(Msg(RTM_NEWQDISC, &root, sizeof root).str(TCA_KIND, "htb").bytes(), q));
  REQUIRE(q.size() == 1);
  CHECK(std::isnan(q[0].rate_Bps));              // an HTB qdisc's rate is its classes'
  CHECK(std::isnan(root_shaper_Bps(3, q, {})));  // no class: nothing shapes
  std::vector<TcEntry> c;
  REQUIRE(decode_tc(htb_class(3, 0x00010010U, TC_H_ROOT, 3'750'000, 3'750'000), c));
  REQUIRE(c.size() == 1);
  CHECK(c[0].is_class);
  CHECK(c[0].handle == 0x00010010U);
  CHECK(c[0].kind == "htb");
  CHECK(c[0].rate_Bps == 3'750'000);
  CHECK(root_shaper_Bps(3, q, c) == 3'750'000);
  // A second top-level class: rate below ceil, and a top-level class cannot borrow: its rate.
  REQUIRE(decode_tc(htb_class(3, 0x00010020U, TC_H_ROOT, 1'000'000, 5'000'000), c));
  CHECK(c.back().rate_Bps == 1'000'000);
  // Not counted: a child class, another interface's class, another qdisc's (major 2:) class.
  REQUIRE(decode_tc(htb_class(3, 0x00010011U, 0x00010010U, 3'000'000, 3'000'000), c));
  REQUIRE(decode_tc(htb_class(4, 0x00010010U, TC_H_ROOT, 9'000'000, 9'000'000), c));
  REQUIRE(decode_tc(htb_class(3, 0x00020010U, TC_H_ROOT, 9'000'000, 9'000'000), c));
  CHECK(root_shaper_Bps(3, q, c) == 4'750'000);
  // Past 4 GB/s the 64-bit rate and ceil override the saturated 32-bit ones.
  c.clear();
  REQUIRE(decode_tc(htb_class(3, 0x00010010U, TC_H_ROOT, 0xffffffffU, 0xffffffffU, 6'000'000'000ULL,
                              5'000'000'000ULL),
                    c));
  CHECK(c[0].rate_Bps == 5e9);
  c.clear();
  REQUIRE(decode_tc(htb_class(3, 0x00010010U, TC_H_ROOT, 0xffffffffU, 0xffffffffU, 5'000'000'000ULL,
                              6'000'000'000ULL),
                    c));
  CHECK(c[0].rate_Bps == 5e9);
}

TEST_CASE("Runtime.LinkCapacity.DecodesLinks") {
  std::vector<LinkEntry> l;
  REQUIRE(decode_links(concat(concat(link_message(1, "lo", IFF_UP | IFF_LOOPBACK, ""),
                                     link_message(7, "ifb0", IFF_UP | (1U << 16), "ifb")),
                              done_message()),
                       l));
  REQUIRE(l.size() == 2);
  CHECK(l[0].ifindex == 1);
  CHECK(l[0].name == "lo");
  CHECK(l[0].kind.empty());
  CHECK((l[0].flags & IFF_LOOPBACK) != 0);
  CHECK(l[1].ifindex == 7);
  CHECK(l[1].name == "ifb0");
  CHECK(l[1].kind == "ifb");
}

TEST_CASE("Runtime.LinkCapacity.DecodersRefuseTruncatedAndMalformedMessages") {
  const auto tc = [](const std::vector<char>& b) {
    std::vector<TcEntry> out;
    return decode_tc(b, out);
  };
  const auto links = [](const std::vector<char>& b) {
    std::vector<LinkEntry> out;
    return decode_links(b, out);
  };
  CHECK(cuts_refused(tbf_qdisc(3, 2'500'000, 2'500'000), tc) > 0);
  CHECK(cuts_refused(htb_class(3, 0x00010010U, TC_H_ROOT, 1, 2, 3, 4), tc) > 0);
  CHECK(cuts_refused(link_message(7, "ifb0", IFF_UP, "ifb"), links) > 0);
  // A header claiming 200 bytes in 64.
  std::vector<char> msg(64, 0);
  const std::uint32_t len = 200;
  std::memcpy(msg.data(), &len, sizeof len);
  CHECK_FALSE(tc(msg));
  CHECK_FALSE(links(msg));
  // A TCA_TBF_PARMS shorter than its struct; an HTB ceil64 of 4 bytes.
  const tcmsg t = tc_header(3, 0x80010000U, TC_H_ROOT);
  const char few[8] = {};
  CHECK_FALSE(tc(Msg(RTM_NEWQDISC, &t, sizeof t)
                     .str(TCA_KIND, "tbf")
                     .begin(TCA_OPTIONS)
                     .attr(TCA_TBF_PARMS, few, sizeof few)
                     .end()
                     .bytes()));
  tc_htb_opt o{};
  const std::uint32_t four = 4;
  CHECK_FALSE(tc(Msg(RTM_NEWTCLASS, &t, sizeof t)
                     .str(TCA_KIND, "htb")
                     .begin(TCA_OPTIONS)
                     .attr(TCA_HTB_PARMS, &o, sizeof o)
                     .attr(TCA_HTB_CEIL64, &four, sizeof four)
                     .end()
                     .bytes()));
  // A nested attribute running past its parent (TCA_OPTIONS says 8 bytes, PARMS says more).
  auto nested = tbf_qdisc(3, 2'500'000, std::nullopt);
  const std::size_t opts = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(tcmsg)) + RTA_SPACE(4);  // "tbf\0"
  const unsigned short eight = 8;
  std::memcpy(nested.data() + opts, &eight, sizeof eight);
  CHECK_FALSE(tc(nested));
  // A message with a family header shorter than tcmsg.
  const std::uint16_t tiny = 0;
  CHECK_FALSE(tc(Msg(RTM_NEWQDISC, &tiny, sizeof tiny).bytes()));
}

TEST_CASE("Runtime.LinkCapacity.ReadsTheCallingThreadsNamespace") {
  // The test's own namespace: whatever it holds, a figure or NaN, never an error.
  auto c = read_link_capacity();
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  MESSAGE("this namespace: egress " << c->egress_Bps << " B/s, ingress " << c->ingress_Bps
                                    << " B/s");
  CHECK(std::isnan(link_speed_Bps("no-such-dev0")));
  CHECK(std::isnan(link_speed_Bps("a-name-longer-than-ifnamsiz")));
}

TEST_CASE("Runtime.LinkCapacity.ReadsHtbEgressAndIfbIngressInANamespace") {
  NamespacePair ns("lcap");
  if (!ns.available()) {
    MESSAGE("skipped: cannot create network namespaces here (needs root and iproute2)");
    return;
  }
  const std::string in_a = "ip netns exec " + ns.a() + " ";
  // a: HTB 30 Mbit on the veth's egress; ingress through ifb0 with a TBF at 20 Mbit; a spare
  // ifb1 that is down with a TBF of its own (left out).
  if (!test::sh(in_a + "ip link add ifb0 type ifb") ||
      !test::sh(in_a + "ip link add ifb1 type ifb")) {
    MESSAGE("skipped: no ifb devices here (the ifb kernel module)");
    return;
  }
  REQUIRE(test::sh(in_a + "tc qdisc add dev " + ns.dev_a() + " root handle 1: htb default 10"));
  REQUIRE(test::sh(in_a + "tc class add dev " + ns.dev_a() +
                   " parent 1: classid 1:10 htb rate 30mbit ceil 30mbit"));
  REQUIRE(test::sh(in_a + "ip link set ifb0 up"));
  REQUIRE(test::sh(in_a + "tc qdisc add dev ifb0 root tbf rate 20mbit burst 32kb latency 50ms"));
  REQUIRE(test::sh(in_a + "tc qdisc add dev ifb1 root tbf rate 5mbit burst 32kb latency 50ms"));
  redirect_ingress(in_a, ns.dev_a(), "ifb0");

  const Measured a = measure_in(ns.a(), ns.dev_a());
  REQUIRE(a.ran);
  REQUIRE_MESSAGE(a.cap->ok(), a.cap->status().message());
  const LinkCapacity& ca = **a.cap;
  MESSAGE("shaped namespace: egress " << ca.egress_Bps << " B/s, ingress " << ca.ingress_Bps
                                      << " B/s");
  CHECK(ca.egress_Bps == doctest::Approx(30e6 / 8).epsilon(0.01));
  CHECK(ca.ingress_Bps == doctest::Approx(20e6 / 8).epsilon(0.01));

  // b: no shaper at all: the veth's speed both ways (veth says 10000 Mbit/s), read with ethtool
  // from the thread's namespace. The thread's /sys/class/net is the one whoever mounted /sys
  // saw (setns(2) does not remount it): the veth may not be there.
  const Measured b = measure_in(ns.b(), ns.dev_b());
  REQUIRE(b.ran);
  REQUIRE_MESSAGE(b.cap->ok(), b.cap->status().message());
  MESSAGE("veth speed from ethtool in the namespace: "
          << b.veth_speed * 8 / 1e6 << " Mbit/s; /sys/class/net/" << ns.dev_b()
          << "/speed from the setns'd thread: " << b.sysfs_speed);
  CHECK(b.veth_speed == doctest::Approx(10000e6 / 8));
  CHECK(b.cap->value().egress_Bps == doctest::Approx(b.veth_speed));
  CHECK(b.cap->value().ingress_Bps == doctest::Approx(b.veth_speed));
}

TEST_CASE("Runtime.LinkCapacity.ReadsTheTestBedsLayout") {
  // tests/netbed/netbed.py's node: HTB (r2q, a bfifo under the class) on both the veth and
  // ifb0, the veth's ingress redirected to ifb0. Both directions read the node's rate.
  NamespacePair ns("lcbed");
  if (!ns.available()) {
    MESSAGE("skipped: cannot create network namespaces here (needs root and iproute2)");
    return;
  }
  const std::string in_a = "ip netns exec " + ns.a() + " ";
  if (!test::sh(in_a + "ip link add ifb0 type ifb")) {
    MESSAGE("skipped: no ifb devices here (the ifb kernel module)");
    return;
  }
  REQUIRE(test::sh(in_a + "ip link set ifb0 txqueuelen 1000 up"));
  for (const std::string& dev : {ns.dev_a(), std::string("ifb0")}) {
    REQUIRE(
        test::sh(in_a + "tc qdisc replace dev " + dev + " root handle 1: htb default 10 r2q 1000"));
    REQUIRE(test::sh(in_a + "tc class add dev " + dev +
                     " parent 1: classid 1:10 htb rate 50mbit ceil 50mbit"));
    REQUIRE(
        test::sh(in_a + "tc qdisc add dev " + dev + " parent 1:10 handle 10: bfifo limit 655360"));
  }
  redirect_ingress(in_a, ns.dev_a(), "ifb0");
  const Measured a = measure_in(ns.a(), ns.dev_a());
  REQUIRE(a.ran);
  REQUIRE_MESSAGE(a.cap->ok(), a.cap->status().message());
  MESSAGE("test bed node: egress " << a.cap->value().egress_Bps << " B/s, ingress "
                                   << a.cap->value().ingress_Bps << " B/s");
  CHECK(a.cap->value().egress_Bps == doctest::Approx(50e6 / 8).epsilon(0.01));
  CHECK(a.cap->value().ingress_Bps == doctest::Approx(50e6 / 8).epsilon(0.01));
  // The veth down: no link left, NaN both ways (ifb0 alone is no link).
  REQUIRE(test::sh(in_a + "ip link set " + ns.dev_a() + " down"));
  const Measured down = measure_in(ns.a(), ns.dev_a());
  REQUIRE(down.ran);
  REQUIRE(down.cap->ok());
  CHECK(std::isnan(down.cap->value().egress_Bps));
  CHECK(std::isnan(down.cap->value().ingress_Bps));
}
