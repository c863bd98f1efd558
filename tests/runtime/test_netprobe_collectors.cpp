// The agent's collectors (runtime/netprobe/) on the real /proc, real rtnetlink in namespaces
// made here (a veth pair, a TBF qdisc), and a real cgroup v1 cpu quota.

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <atomic>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/netprobe/child_cpu.hpp"
#include "runtime/netprobe/counter_delta.hpp"
#include "runtime/netprobe/cpu_quota.hpp"
#include "runtime/netprobe/data_client.hpp"
#include "runtime/netprobe/data_server.hpp"
#include "runtime/netprobe/interface_rates.hpp"
#include "runtime/netprobe/qdisc_stats.hpp"
#include "runtime/netprobe/socket_util.hpp"
#include "support/net_namespace.hpp"

using namespace chorus;
using namespace chorus::netprobe;
using chorus::test::NamespacePair;
using chorus::test::NetnsThread;

namespace {

const char* kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
    "  eth0: 5000 50 0 0 0 0 0 0 7000 70 0 0 0 0 0 0\n";

}  // namespace

TEST_CASE("Runtime.Netprobe.CounterDeltaIsWrapSafe") {
  CHECK(counter_delta(10, 25) == 15);
  CHECK(counter_delta(0xfffffff0ULL, 0x10) == 0x20);  // a 32-bit counter wrapped
  CHECK(counter_delta(1ULL << 40, 5) == 5);           // reset: counted from zero
  CHECK(counter_delta(~0ULL - 1, ~0ULL) == 1);
}

TEST_CASE("Runtime.Netprobe.NetDevParsesAndRatesLeaveLoopbackOut") {
  auto c = parse_net_dev(kNetDev);
  REQUIRE(c.ok());
  REQUIRE(c->size() == 2);
  CHECK((*c)[1].name == "eth0");
  CHECK((*c)[1].rx_bytes == 5000);
  CHECK((*c)[1].tx_bytes == 7000);
  InterfaceRates rates;
  auto first = rates.sample(*c, 10.0);
  CHECK(std::isnan(first.rx_Bps));
  auto later = *c;
  later[0].rx_bytes += 1'000'000;  // loopback traffic: not counted
  later[1].rx_bytes += 2000;
  later[1].tx_bytes += 500;
  auto r = rates.sample(later, 12.0);
  CHECK(r.rx_Bps == doctest::Approx(1000));
  CHECK(r.tx_Bps == doctest::Approx(250));
  // A 32-bit wrap on a driver's counter still reads as the bytes moved.
  auto wrapped = later;
  wrapped[1].rx_bytes = 0xfffffff0ULL;
  rates.sample(wrapped, 13.0);
  wrapped[1].rx_bytes = 0x0f;
  CHECK(rates.sample(wrapped, 14.0).rx_Bps == doctest::Approx(0x1f));
  CHECK(parse_net_dev("h\nh\n eth0: 1 2 3\n").status().message().find("16 counters") !=
        std::string::npos);
  CHECK_FALSE(parse_net_dev("h\nh\nno colon here\n").ok());
  // The real file of this namespace parses.
  InterfaceRates real;
  auto s = real.sample(steady_seconds());
  REQUIRE_MESSAGE(s.ok(), s.status().message());
}

TEST_CASE("Runtime.Netprobe.IngressShapingsIfbIsNotCountedTwice") {
  // Ingress shaping redirects eth0's received packets through ifb0: its counters repeat them.
  std::vector<InterfaceCounters> c(2);
  c[0].name = "eth0";
  c[1].name = "ifb0";
  InterfaceRates rates;
  rates.sample(c, 1.0);
  c[0].rx_bytes += 4000;
  c[1].tx_bytes += 4000;  // the same bytes, leaving the ifb towards the stack
  c[1].rx_bytes += 4000;
  auto r = rates.sample(c, 2.0);
  CHECK(r.rx_Bps == doctest::Approx(4000));
  CHECK(r.tx_Bps == doctest::Approx(0));
}

TEST_CASE("Runtime.Netprobe.InterfaceRatesSeeTheNamespacesOwnVeth") {
  NamespacePair ns("telec");
  if (!ns.available()) {
    MESSAGE("skipped: cannot create network namespaces here (needs root and iproute2)");
    return;
  }
  std::atomic<int> port{0};
  std::unique_ptr<DataServer> server;
  std::atomic<bool> ready{false};
  NetnsThread serve(ns.b(), [&] {
    auto s = DataServer::listen(ns.addr_b() + ":0");
    REQUIRE(s.ok());
    server = std::move(*s);
    port = server->port();
    ready = true;
    (void)server->run();
  });
  while (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  bool ran = false;
  NetnsThread client(ns.a(), [&] {
    ran = true;
    InterfaceRates rates;
    const double t0 = steady_seconds();
    REQUIRE(rates.sample(t0).ok());
    {
      // Loopback traffic in this namespace is not the network.
      auto lo_server = DataServer::listen("127.0.0.1:0");
      REQUIRE(lo_server.ok());
      std::thread lo_thread([&] { (void)(*lo_server)->run(); });
      auto lc = DataClient::connect("127.0.0.1", (*lo_server)->port());
      REQUIRE(lc.ok());
      REQUIRE(lc->get(8ULL << 20).ok());
      (*lo_server)->stop();
      lo_thread.join();
    }
    auto c = DataClient::connect(ns.addr_b(), port);
    REQUIRE_MESSAGE(c.ok(), c.status().message());
    REQUIRE(c->get(2ULL << 20).ok());
    REQUIRE(c->put(1ULL << 20).ok());
    const double t1 = steady_seconds();
    auto r = rates.sample(t1);
    REQUIRE(r.ok());
    const double dt = t1 - t0;
    const double rx = r->rx_Bps * dt, tx = r->tx_Bps * dt;
    // The 2 MiB down and 1 MiB up, with TCP/IP headers and ACKs on top, no 8 MiB of loopback.
    CHECK(rx >= 2.0 * (1 << 20));
    CHECK(rx < 2.4 * (1 << 20));
    CHECK(tx >= 1.0 * (1 << 20));
    CHECK(tx < 1.4 * (1 << 20));
  });
  client.join();
  CHECK(ran);
  server->stop();
}

TEST_CASE("Runtime.Netprobe.QdiscStatsReadATbfsBacklogAndDrops") {
  NamespacePair ns("teleq");
  if (!ns.available()) {
    MESSAGE("skipped: cannot create network namespaces here (needs root and iproute2)");
    return;
  }
  // 1 Mbit with a 30 KB queue: a burst of UDP packets fills it and the rest is dropped.
  REQUIRE(test::sh("ip netns exec " + ns.a() + " tc qdisc add dev " + ns.dev_a() +
                   " root tbf rate 1mbit burst 4k limit 30000"));
  bool ran = false;
  NetnsThread t(ns.a(), [&] {
    ran = true;
    auto q = dump_qdiscs();
    REQUIRE_MESSAGE(q.ok(), q.status().message());
    bool found = false;
    for (const auto& d : *q) found = found || (d.kind == "tbf" && d.parent == 0xffffffffU);
    CHECK(found);
    QdiscStats stats;
    auto first = stats.sample(steady_seconds());
    REQUIRE(first.ok());
    CHECK(first->backlog_bytes == 0);
    CHECK(std::isnan(first->drops_per_s));
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    ::inet_pton(AF_INET, ns.addr_b().c_str(), &to.sin_addr);
    const std::string payload(1400, 'x');
    for (int i = 0; i < 300; ++i) {
      ::sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
    ::close(fd);
    auto after = stats.sample(steady_seconds());
    REQUIRE(after.ok());
    CHECK(after->backlog_bytes > 10000);  // queued behind 1 Mbit: drains over ~0.2 s
    CHECK(after->backlog_bytes <= 30000 + 1500);
    CHECK(after->drops_per_s > 0);
    // The kernel's own count agrees: what tc shows is what we read.
    auto raw = dump_qdiscs();
    REQUIRE(raw.ok());
    std::uint32_t drops = 0;
    for (const auto& d : *raw) {
      if (d.kind == "tbf") drops = d.drops;
    }
    CHECK(drops >= 200);  // 300 x 1.4 KB into 30 KB
  });
  t.join();
  CHECK(ran);
}

TEST_CASE("Runtime.Netprobe.QdiscDecoderRefusesTruncatedMessages") {
  // A real dump, then every truncation of it: never read past the end (ASan builds check it).
  auto q = dump_qdiscs();
  REQUIRE_MESSAGE(q.ok(), q.status().message());
  char msg[64] = {};
  // nlmsghdr claiming 200 bytes in a 64-byte buffer.
  const std::uint32_t len = 200;
  std::memcpy(msg, &len, 4);
  std::vector<QdiscCounters> out;
  bool done = false;
  int error = 0;
  CHECK_FALSE(decode_qdisc_messages(msg, sizeof msg, out, done, error));
}

TEST_CASE("Runtime.Netprobe.ChildCpuCountsLiveGroupsAndReapedChildren") {
  ProcStat st;
  REQUIRE(parse_proc_stat(
      "42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 5 0 0", st));
  CHECK(st.pid == 42);
  CHECK(st.ppid == 1);
  CHECK(st.pgid == 42);
  CHECK(st.cpu_ticks == 250 + 50 + 7 + 3);
  CHECK_FALSE(parse_proc_stat("42 (x) S 1", st));

  const double reaped0 = reaped_children_cpu_seconds();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setpgid(0, 0);
    timespec ts{};
    do {
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while (ts.tv_sec * 1.0 + ts.tv_nsec / 1e9 < 0.4);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(child, child);
  const int group[] = {static_cast<int>(child)};
  ChildCpu meter;
  CHECK(std::isnan(meter.sample(group, steady_seconds())));
  const double t0 = steady_seconds();
  double live = 0;
  for (int i = 0; i < 200 && live < 0.39; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    live = group_cpu_seconds(group);
  }
  CHECK(live >= 0.39);
  const double rate = meter.sample(group, steady_seconds());
  CHECK(rate * (steady_seconds() - t0) >= 0.35);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(reaped_children_cpu_seconds() - reaped0 >= 0.39);
  // Once reaped, it counts once: no group left, the reaped total holds it.
  const double after = meter.sample({}, steady_seconds());
  CHECK(after >= 0);
}

TEST_CASE("Runtime.Netprobe.CpuQuotaParsesCgroupFilesAndReadsARealQuota") {
  bool v2 = true;
  CHECK(cpu_cgroup_path("5:memory:/m\n4:cpu,cpuacct:/a/b\n0::/u\n", v2) == "/a/b");
  CHECK_FALSE(v2);
  CHECK(cpu_cgroup_path("0::/u/v\n", v2) == "/u/v");
  CHECK(v2);
  CHECK(cpu_cgroup_path("garbage", v2).empty());
  const char* mounts =
      "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "32 30 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  CHECK(cgroup_mount(mounts, false) == "/sys/fs/cgroup/cpu");
  CHECK(cgroup_mount(mounts, true) == "/sys/fs/cgroup/unified");

  const std::string dir = "/sys/fs/cgroup/cpu/telequota" + std::to_string(::getpid());
  std::error_code ec;
  if (!std::filesystem::create_directory(dir, ec)) {
    MESSAGE("skipped the real quota: cannot create a cgroup v1 cpu folder (" << dir << ")");
    return;
  }
  const auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    out.close();
    return !out.fail();
  };
  const std::string sub = dir + "/inner";
  std::filesystem::create_directory(sub, ec);
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  CHECK(write(sub + "/cgroup.procs", std::to_string(child)));
  CHECK(std::isnan(cpu_quota_cores(child)));
  // The inner folder has no quota of its own, its parent 0.5 cores: the parent binds.
  CHECK(write(dir + "/cpu.cfs_period_us", "100000"));
  CHECK(write(dir + "/cpu.cfs_quota_us", "50000"));
  CHECK(cpu_quota_cores(child) == doctest::Approx(0.5));
  // (The kernel keeps a child's quota at most its parent's, so the parent is lifted first.)
  CHECK(write(dir + "/cpu.cfs_quota_us", "-1"));
  CHECK(write(sub + "/cpu.cfs_period_us", "100000"));
  CHECK(write(sub + "/cpu.cfs_quota_us", "150000"));
  CHECK(cpu_quota_cores(child) == doctest::Approx(1.5));
  CHECK(write(sub + "/cpu.cfs_quota_us", "-1"));
  CHECK(std::isnan(cpu_quota_cores(child)));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  std::filesystem::remove(sub, ec);
  std::filesystem::remove(dir, ec);
  CHECK_FALSE(std::filesystem::exists(dir));
}
