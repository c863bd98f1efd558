// The network-aware feature vector and the analytic estimate (schedulers/netaware/features.hpp).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

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
  const double expected = 50e6 / (10e6 / 8) + 0.010 * transfer_round_trips(50e6) +
                          10e6 / (100e6 / 8) + 0.001 * transfer_round_trips(10e6) + 2.0;
  CHECK(feature(x, Feature::analytic_s) == doctest::Approx(expected).epsilon(1e-5));
  // 40 s + 0.8 s + 2 s of CPU, plus round trips.
  CHECK(expected == doctest::Approx(42.8 + 0.010 * transfer_round_trips(50e6) +
                                    0.001 * transfer_round_trips(10e6)));
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
  CHECK(analytic_estimate_s(x) == doctest::Approx(6.0));
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

TEST_CASE("Schedulers.Features.RoundTripsGrowWithTheLogOfTheBytes") {
  CHECK(transfer_round_trips(0) == 0);
  CHECK(transfer_round_trips(1000) == doctest::Approx(3));  // fits the first window
  CHECK(transfer_round_trips(1e6) > transfer_round_trips(1e5));
  CHECK(transfer_round_trips(1e9) < 30);
}

}  // namespace chorus
