// The link prober (runtime/netprobe/link_prober.hpp): figures on loopback, failures, and the
// probe budget measured on a real shaped link (two namespaces made here, TBF both ways).

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "runtime/netprobe/data_server.hpp"
#include "runtime/netprobe/link_prober.hpp"
#include "runtime/netprobe/socket_util.hpp"
#include "support/net_namespace.hpp"

using namespace chorus;
using namespace chorus::netprobe;
using chorus::test::NamespacePair;
using chorus::test::NetnsThread;

namespace {

struct ServerThread {
  std::unique_ptr<DataServer> server;
  std::thread thread;
  explicit ServerThread(const std::string& where = "127.0.0.1:0") {
    auto s = DataServer::listen(where);
    REQUIRE_MESSAGE(s.ok(), s.status().message());
    server = std::move(*s);
    thread = std::thread([this] { (void)server->run(); });
  }
  ~ServerThread() {
    server->stop();
    thread.join();
  }
};

// Polls `snap` until `ok(snapshot)` or 15 s.
template <typename F>
AgentTelemetry wait_for(const LinkProber& p, F&& ok) {
  AgentTelemetry t;
  for (int i = 0; i < 300; ++i) {
    p.snapshot(t, steady_seconds());
    if (ok(t)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return t;
}

}  // namespace

TEST_CASE("Runtime.Netprobe.ProberMeasuresEachTargetAndFailsSoftly") {
  ServerThread st;
  int dead_port = 0;
  {
    ServerThread gone;
    dead_port = gone.server->port();
  }
  ProbeBudget b;
  b.rtt_interval = std::chrono::milliseconds(100);
  b.connect_interval = std::chrono::milliseconds(100);
  b.timeout = std::chrono::seconds(1);
  LinkProber prober(b);
  prober.set_targets({{"store", "127.0.0.1", st.server->port(), SourceProbe::data_server},
                      {"web", "127.0.0.1", st.server->port(), SourceProbe::connect},
                      {"down", "127.0.0.1", dead_port, SourceProbe::data_server},
                      {"quiet", "127.0.0.1", dead_port, SourceProbe::none}},
                     7);
  auto t = wait_for(prober, [](const AgentTelemetry& t) {
    return t.links.size() == 4 && !std::isnan(t.links[0].down_Bps) &&
           !std::isnan(t.links[0].up_Bps) && !std::isnan(t.links[1].rtt_s);
  });
  CHECK(t.targets_generation == 7);
  REQUIRE(t.links.size() == 4);
  CHECK(t.links[0].rtt_s > 0);
  CHECK(t.links[0].down_Bps > 0);
  CHECK(t.links[0].up_Bps > 0);
  CHECK(t.links[0].age_s >= 0);
  CHECK(t.links[1].rtt_s > 0);             // connect time
  CHECK(std::isnan(t.links[1].down_Bps));  // no transfers to a plain TCP service
  CHECK(std::isnan(t.links[2].rtt_s));     // nothing answers there
  CHECK(std::isnan(t.links[2].age_s));
  CHECK(std::isnan(t.links[3].rtt_s));  // never probed
  const auto s = prober.stats();
  REQUIRE(s.size() == 4);
  CHECK(s[0].down_probes >= 1);
  CHECK(s[2].failures >= 1);
  CHECK(s[3].failures == 0);
  // New targets: a new generation, the old figures forgotten.
  prober.set_targets({{"down", "127.0.0.1", dead_port, SourceProbe::data_server}}, 8);
  auto u = wait_for(prober, [](const AgentTelemetry& t) {
    return t.targets_generation == 8 && t.links.size() == 1;
  });
  CHECK(u.targets_generation == 8);
  REQUIRE(u.links.size() == 1);
  CHECK(std::isnan(u.links[0].rtt_s));
}

TEST_CASE("Runtime.Netprobe.ProbesStayWithinOnePercentOfAShapedLink") {
  NamespacePair ns("telep");
  if (!ns.available()) {
    MESSAGE("skipped: cannot create network namespaces here (needs root and iproute2)");
    return;
  }
  // 20 Mbit/s each way: B's egress (GET, source -> node) and A's (PUT, node -> source).
  const double rate_Bps = 20e6 / 8;
  for (const auto& [n, dev] : {std::pair{ns.a(), ns.dev_a()}, std::pair{ns.b(), ns.dev_b()}}) {
    REQUIRE(test::sh("ip netns exec " + n + " tc qdisc add dev " + dev +
                     " root tbf rate 20mbit burst 32k latency 100ms"));
  }
  std::unique_ptr<ServerThread> st;
  {
    std::atomic<bool> up{false};
    NetnsThread in_b(ns.b(), [&] {
      st = std::make_unique<ServerThread>(ns.addr_b() + ":0");
      up = true;
    });
    in_b.join();
    REQUIRE(up);
  }
  const double window_s = 30;
  AgentTelemetry last;
  std::vector<LinkProbeStats> stats;
  double elapsed = 0;
  bool ran = false;
  NetnsThread in_a(ns.a(), [&] {
    ran = true;
    const double t0 = steady_seconds();
    {
      LinkProber prober;  // the default budget: 1%
      prober.set_targets({{"store", ns.addr_b(), st->server->port(), SourceProbe::data_server}}, 1);
      while (steady_seconds() - t0 < window_s) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      prober.snapshot(last, steady_seconds());
      stats = prober.stats();
    }  // joined: no probe in flight any more
    elapsed = steady_seconds() - t0;
  });
  in_a.join();
  REQUIRE(ran);
  const auto seen = st->server->stats();
  const double down_share = static_cast<double>(seen.bytes_sent) / (rate_Bps * elapsed);
  const double up_share = static_cast<double>(seen.bytes_received) / (rate_Bps * elapsed);
  REQUIRE(last.links.size() == 1);
  const auto& l = last.links[0];
  std::printf(
      "probe budget over %.1f s at 20 Mbit/s: down %llu bytes in %llu probes = %.3f%% of the "
      "link, up %llu bytes in %llu probes = %.3f%%; measured down %.2f Mbit/s, up %.2f Mbit/s, "
      "rtt %.3f ms\n",
      elapsed, static_cast<unsigned long long>(seen.bytes_sent),
      static_cast<unsigned long long>(stats[0].down_probes), 100 * down_share,
      static_cast<unsigned long long>(seen.bytes_received),
      static_cast<unsigned long long>(stats[0].up_probes), 100 * up_share, l.down_Bps * 8 / 1e6,
      l.up_Bps * 8 / 1e6, l.rtt_s * 1e3);
  CHECK(down_share <= 0.01);
  CHECK(up_share <= 0.01);
  CHECK(stats[0].down_probes >= 3);  // it did measure, more than once
  CHECK(stats[0].up_probes >= 3);
  CHECK(stats[0].down_capacity_Bps > 0);  // and long enough to count
  CHECK(stats[0].up_capacity_Bps > 0);
  CHECK(std::abs(l.down_Bps - rate_Bps) <= 0.15 * rate_Bps);
  CHECK(std::abs(l.up_Bps - rate_Bps) <= 0.15 * rate_Bps);
}
