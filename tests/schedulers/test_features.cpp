// The network-aware feature vector and the analytic estimate (schedulers/netaware/features.hpp).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "schedulers/netaware/features.hpp"
#include "schedulers/placement/cluster_state.hpp"

namespace chorus {
namespace {

using namespace std::chrono_literals;

TaskSpec data_task() {
  TaskSpec t;
  t.id = 0;
  t.name = "fetch";
  t.data.input_bytes = 50'000'000;  // 50 MB
  t.data.from = 0;
  t.data.output_bytes = 10'000'000;
  t.data.to = 1;
  t.data.cpu = 2s;
  return t;
}

ClusterState one_node(int cores) {
  return ClusterState({NodeInfo{"n1", Resources{cores, 0, 0}}});
}

}  // namespace

TEST_CASE("Schedulers.Features.NamesAreUniqueAndOnePerFeature") {
  auto names = feature_names();
  REQUIRE(names.size() == kFeatureCount);
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK_FALSE(names[i].empty());
    for (std::size_t j = i + 1; j < names.size(); ++j) CHECK(names[i] != names[j]);
  }
  CHECK(feature_name(Feature::analytic_s) == "analytic_s");
  CHECK(feature_name(Feature::input_mb) == "input_mb");
}

TEST_CASE("Schedulers.Features.AnalyticEstimateAddsTransfersRoundTripsAndCpu") {
  ClusterState c = one_node(4);
  const TimePoint now = TimePoint{} + 100s;
  NodeFacts& f = c.facts(0);
  f.updated = now - 2s;
  f.links.resize(2);
  f.links[0].down_Bps = 10e6 / 8;  // 10 Mbit/s
  f.links[0].rtt_s = 0.010;
  f.links[1].up_Bps = 100e6 / 8;  // 100 Mbit/s
  f.links[1].rtt_s = 0.001;
  FeatureVector x{};
  fill_features(data_task(), c.view(0), now, x);
  CHECK(feature(x, Feature::input_mb) == doctest::Approx(50));
  CHECK(feature(x, Feature::down_mbps) == doctest::Approx(10));
  CHECK(feature(x, Feature::telemetry_age_s) == doctest::Approx(2));
  CHECK(feature(x, Feature::cpu_share) == doctest::Approx(1));
  // 40 s + 0.8 s + 2 s of CPU, plus two round trips each way (both paths' bandwidth-delay
  // products, 12.5 KB, are below the first window: no slow-start round costs a round trip).
  CHECK(feature(x, Feature::analytic_s) ==
        doctest::Approx(40 + 2 * 0.010 + 0.8 + 2 * 0.001 + 2.0).epsilon(1e-5));
}

TEST_CASE("Schedulers.Features.QuotaSharedByRunningTasksSlowsTheCpuPart") {
  ClusterState c = one_node(4);
  TaskSpec t;
  t.id = 0;
  t.data.cpu = 3s;
  c.facts(0).cpu_quota = 1.0;  // one core of quota
  TaskSpec other;              // and one task already burns it
  other.id = 1;
  Placement there;
  there.fit = Fit::now;
  there.node = 0;
  c.reserve(other, there);
  FeatureVector x{};
  fill_features(t, c.view(0), TimePoint{}, x);
  CHECK(feature(x, Feature::cpu_share) == doctest::Approx(0.5));
  // The period's first 50 ms of quota at full speed, the other 2.95 s at half a core.
  CHECK(analytic_estimate_s(x) == doctest::Approx(0.05 + 2.95 / 0.5));
}

TEST_CASE("Schedulers.Features.UnknownLinkMakesTheEstimateNotComputable") {
  ClusterState c = one_node(2);
  FeatureVector x{};
  fill_features(data_task(), c.view(0), TimePoint{}, x);  // the node never reported
  CHECK(std::isnan(feature(x, Feature::down_mbps)));
  CHECK(std::isnan(feature(x, Feature::telemetry_age_s)));
  CHECK(std::isnan(analytic_estimate_s(x)));
  // A task that moves nothing is its CPU time, telemetry or not.
  TaskSpec cpu_only;
  cpu_only.estimate = 1500ms;
  fill_features(cpu_only, c.view(0), TimePoint{}, x);
  CHECK(analytic_estimate_s(x) == doctest::Approx(1.5));
}

TEST_CASE("Schedulers.Features.ASnapshotNewerThanTheDecisionTimeIsZeroSecondsOld") {
  ClusterState c = one_node(2);
  const TimePoint now = TimePoint{} + 10s;
  c.facts(0).updated = now + 50ms;  // written in the same loop turn, after `now` was read
  FeatureVector x{};
  fill_features(data_task(), c.view(0), now, x);
  CHECK(feature(x, Feature::telemetry_age_s) == 0.0f);
}

TEST_CASE("Schedulers.Features.TransferTimeIsTcpSlowStartUntilThePipeIsFull") {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(transfer_s(0, 1e6, 0.01, nan) == 0);
  // Within the first window: connect + request, then the bytes.
  CHECK(transfer_s(1000, 1e6, 0.010, nan) == doctest::Approx(0.020 + 0.001));
  // A far store on a plain path: 2.9 MB over 200 Mbit/s at 40 ms. The pipe (1 MB) fills after
  // 7 rounds of 14,480 x 2^k bytes (1,838,960 bytes in all); the rest flows at 25 MB/s.
  const double plain = 0.080 + 7 * 0.040 + (2.9e6 - 1838960) / 25e6;
  CHECK(transfer_s(2.9e6, 25e6, 0.040, 0.040) == doctest::Approx(plain));
  CHECK(transfer_s(2.9e6, 25e6, 0.040, nan) == doctest::Approx(plain));
  // The same store behind a relay that terminates TCP 0.1 ms away (the test bed's delay relay):
  // the request waits the 40 ms once, slow start ramps at 0.1 ms (the 2.5 KB pipe is below the
  // first window, no round is idle).
  CHECK(transfer_s(2.9e6, 25e6, 0.040, 0.0001) == doctest::Approx(0.0001 + 0.040 + 2.9e6 / 25e6));
  // Bandwidth-bound: the window starts above the bandwidth-delay product.
  CHECK(transfer_s(1e9, 1e6, 0.001, nan) == doctest::Approx(0.002 + 1000));
  CHECK(transfer_s(1e6, 1e6, nan, nan) == doctest::Approx(1));
  // Longer with more bytes and more round trip, shorter with more bandwidth; and never above
  // the old additive estimate (bytes / bw + a round trip per slow-start round to the end).
  for (double bytes : {1e4, 1e5, 1e6, 1e7, 1e8}) {
    for (double rtt : {0.001, 0.01, 0.05}) {
      const double t = transfer_s(bytes, 5e6, rtt, nan);
      CHECK(transfer_s(bytes * 2, 5e6, rtt, nan) > t);
      CHECK(transfer_s(bytes, 5e6, rtt * 2, nan) > t);
      CHECK(transfer_s(bytes, 10e6, rtt, nan) < t);
      CHECK(transfer_s(bytes, 5e6, rtt, rtt / 10) <= t);  // a split path ramps faster
      const double additive =
          bytes / 5e6 + rtt * (2 + std::ceil(std::log2(bytes / (10 * 1448.0) + 1)));
      CHECK(t <= additive + 1e-12);
    }
  }
}

TEST_CASE("Schedulers.Features.CpuUnderAQuotaRunsItsFirstPeriodUnthrottled") {
  CHECK(cpu_wall_s(2.0, 1.0) == 2.0);
  CHECK(cpu_wall_s(2.0, 1.5) == 2.0);  // a quota above demand
  // A quarter core: 25 ms of each 100 ms period. 20 ms fit the first period's quota.
  CHECK(cpu_wall_s(0.020, 0.25) == doctest::Approx(0.020));
  CHECK(cpu_wall_s(0.614, 0.25) == doctest::Approx(0.025 + 0.589 / 0.25));
}

TEST_CASE("Schedulers.Features.ExpectedRateIsTheProbeCappedByTheUnusedCapacity") {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  // 200 Mbit/s link carrying 180 of background: a probe that met a gap read 157 Mbit/s.
  CHECK(expected_rate_Bps(157e6 / 8, 200e6 / 8, 180e6 / 8) == doctest::Approx(20e6 / 8));
  CHECK(expected_rate_Bps(50e6 / 8, 200e6 / 8, 10e6 / 8) == doctest::Approx(50e6 / 8));
  // Saturated: floored at 5% of the capacity, not zero.
  CHECK(expected_rate_Bps(40e6 / 8, 200e6 / 8, 230e6 / 8) == doctest::Approx(10e6 / 8));
  // Unknown capacity or rate: the probe.
  CHECK(expected_rate_Bps(40e6 / 8, nan, 10e6 / 8) == doctest::Approx(40e6 / 8));
  CHECK(expected_rate_Bps(40e6 / 8, 200e6 / 8, nan) == doctest::Approx(40e6 / 8));
  CHECK(std::isnan(expected_rate_Bps(nan, 200e6 / 8, 10e6 / 8)));
}

TEST_CASE("Schedulers.Features.TheEstimateUsesTheUnusedCapacityAndTheTcpRoundTrip") {
  ClusterState c = one_node(2);
  const TimePoint now = TimePoint{} + 10s;
  NodeFacts& f = c.facts(0);
  f.updated = now;
  f.rx_Bps = 180e6 / 8;
  f.rx_capacity_Bps = 200e6 / 8;
  f.links.resize(2);
  f.links[0].down_Bps = 157e6 / 8;
  f.links[0].rtt_s = 0.040;
  f.links[0].tcp_rtt_s = 0.0001;
  f.links[1].up_Bps = 100e6 / 8;
  f.links[1].rtt_s = 0.001;
  FeatureVector x{};
  fill_features(data_task(), c.view(0), now, x);
  CHECK(feature(x, Feature::rx_cap_mbps) == doctest::Approx(200));
  CHECK(feature(x, Feature::tcp_rtt_from_ms) == doctest::Approx(0.1));
  CHECK(std::isnan(feature(x, Feature::tx_cap_mbps)));
  CHECK(std::isnan(feature(x, Feature::tcp_rtt_to_ms)));
  // 50 MB at the 20 Mbit/s left unused, the relay's 40 ms once; 10 MB out at the probe's
  // 100 Mbit/s; 2 s of CPU.
  CHECK(feature(x, Feature::analytic_s) ==
        doctest::Approx(0.0001 + 0.040 + 20.0 + 0.002 + 0.8 + 2.0).epsilon(1e-4));
}

}  // namespace chorus
