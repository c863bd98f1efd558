// The network-aware placement (schedulers/netaware/network_aware_policy.hpp) through the
// placement step: the analytic estimate, stale and missing telemetry, the model on the
// prefilter's nodes, the explanation, its options and a model file that does not load; and the
// baselines network-cost and random.
#include <doctest/doctest.h>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schedulers/netaware/network_aware_policy.hpp"
#include "schedulers/netaware/network_cost_policy.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/placement/placement_step.hpp"
#include "schedulers/placement/random_placement.hpp"
#include "schedulers/policy_registry.hpp"

using namespace chorus;
using namespace std::chrono_literals;

namespace {

const TimePoint kNow = TimePoint{} + 1000s;

std::vector<NodeInfo> nodes_of(std::size_t count, int cores = 4) {
  std::vector<NodeInfo> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back({"n" + std::to_string(i), {cores, 0, 0}});
  return out;
}

// Node i: `mbps` down from source 0, 1 ms RTT, `rx_mbps` background, a snapshot `age` old.
void report(ClusterState& c, int i, double mbps, Duration age = 1s, double rx_mbps = 0) {
  NodeFacts& f = c.facts(i);
  f.updated = kNow - age;
  f.rx_Bps = rx_mbps * 1e6 / 8;
  f.tx_Bps = 0;
  f.links.resize(1);
  f.links[0].rtt_s = 0.001;
  f.links[0].down_Bps = mbps * 1e6 / 8;
  f.links[0].up_Bps = mbps * 1e6 / 8;
  f.links[0].measured = f.updated;
  ++f.revision;
}

TaskSpec fetch_task(double mb = 100) {
  TaskSpec t;
  t.id = 7;
  t.name = "fetch";
  t.data.input_bytes = static_cast<std::uint64_t>(mb * 1e6);
  t.data.from = 0;
  t.data.cpu = 1s;
  return t;
}

NetworkAwarePolicy analytic_policy() {
  NetworkAwarePolicy::Options o;
  o.source_names = {"store1"};
  return NetworkAwarePolicy(o);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("chorus-netaware-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// A model of one tree: rx_mbps < 50 ? 1 s : 100 s (missing: 100 s).
std::string write_rx_model() {
  using nlohmann::json;
  json names = json::array();
  for (std::string_view n : feature_names()) names.push_back(std::string(n));
  json tree = {
      {"nodeid", 0},
      {"depth", 0},
      {"split", "rx_mbps"},
      {"split_condition", 50},
      {"yes", 1},
      {"no", 2},
      {"missing", 2},
      {"children", json::array({{{"nodeid", 1}, {"leaf", 1}}, {{"nodeid", 2}, {"leaf", 100}}})}};
  json model = {{"format", "chorus-jct-model"},
                {"version", 1},
                {"features", names},
                {"target", "seconds"},
                {"base_score", 0},
                {"trees", json::array({tree})},
                {"trained_on", {{"rows", 0}, {"runs", 0}, {"created", "test"}}}};
  const std::string path = temp_path("rx-model.json");
  std::ofstream(path) << model.dump();
  return path;
}

// A log_ratio model of one leaf: every prediction is the analytic estimate times `factor`.
std::string write_ratio_model(double factor) {
  using nlohmann::json;
  json names = json::array();
  for (std::string_view n : feature_names()) names.push_back(std::string(n));
  json model = {{"format", "chorus-jct-model"},
                {"version", 1},
                {"features", names},
                {"target", "log_ratio"},
                {"base_score", 0},
                {"trees", json::array({{{"nodeid", 0}, {"leaf", std::log(factor)}}})},
                {"trained_on", {{"rows", 0}, {"runs", 0}, {"created", "test"}}}};
  const std::string path = temp_path("ratio-model.json");
  std::ofstream(path) << model.dump();
  return path;
}

OptionEntry option(const std::string& key, const std::string& text) {
  OptionEntry e;
  e.key = key;
  e.key_at = {"wf.yaml", 3, 5};
  e.value.text = text;
  e.value.at = {"wf.yaml", 3, 5 + static_cast<int>(key.size()) + 2};
  return e;
}

Result<std::unique_ptr<PlacementPolicy>> make(const std::string& name,
                                              std::vector<OptionEntry> entries = {},
                                              PolicyContext context = {}) {
  PolicyOptions o;
  o.entries = std::move(entries);
  return PolicyRegistry::with_builtins().make_placement(name, o, context);
}

}  // namespace

TEST_CASE("Schedulers.NetworkAware.AnalyticPicksTheFastestLinkAndExplains") {
  ClusterState c(nodes_of(3));
  report(c, 0, 10);
  report(c, 1, 200);
  report(c, 2, 50);
  const NetworkAwarePolicy policy = analytic_policy();
  PlacementStep step(policy);
  const TaskSpec t = fetch_task();
  const Placement p = step.place(t, c, kNow);
  REQUIRE(p.fit == Fit::now);
  CHECK(p.node == 1);
  const PlacementExplanation* e = step.explanation();
  REQUIRE(e != nullptr);
  CHECK(e->basis == "analytic (no model)");
  REQUIRE(e->candidates.size() == 3);
  CHECK(e->candidates[0].node == 1);
  CHECK(e->candidates[1].node == 2);
  CHECK(e->candidates[2].node == 0);
  // 100 MB over 200 Mbit/s = 4 s, + 1 s CPU + three round trips at 1 ms.
  CHECK(e->candidates[0].predicted_s ==
        doctest::Approx(transfer_s(100e6, 200e6 / 8, 0.001, 0.001) + 1).epsilon(1e-4));
  CHECK(e->candidates[0].predicted_s == doctest::Approx(5.0024).epsilon(1e-4));
  CHECK(e->candidates[1].predicted_s > e->candidates[0].predicted_s);
  CHECK(e->candidates[2].predicted_s > e->candidates[1].predicted_s);
  REQUIRE(e->candidates[0].has_features);
  CHECK(feature(e->candidates[0].features, Feature::down_mbps) == doctest::Approx(200));
  CHECK(feature(e->candidates[0].features, Feature::input_mb) == doctest::Approx(100));
  CHECK(feature(e->candidates[2].features, Feature::down_mbps) == doctest::Approx(10));
  // First fit explains nothing and keeps its own rule.
  FirstFit ff;
  PlacementStep plain(ff);
  CHECK(plain.place(t, c, kNow).node == 0);
  CHECK(plain.explanation() == nullptr);
}

TEST_CASE("Schedulers.NetworkAware.StaleTelemetrySaysItsAgeThenFallsBack") {
  const NetworkAwarePolicy policy = analytic_policy();
  PlacementStep step(policy);
  const TaskSpec t = fetch_task();
  {
    // The only estimated node's snapshot is 40 s old: still used, the basis says so.
    ClusterState c(nodes_of(2));
    report(c, 0, 100, 40s);
    const Placement p = step.place(t, c, kNow);
    CHECK(p.node == 0);
    REQUIRE(step.explanation() != nullptr);
    CHECK(step.explanation()->basis == "analytic (telemetry 40 s old)");
    CHECK(std::isnan(step.explanation()->candidates[1].predicted_s));  // node 1: fallback
  }
  {
    // Older than max_stale (5 m) counts as none: both fall back, least-allocated order.
    ClusterState c(nodes_of(2));
    report(c, 0, 100, 400s);
    Placement busy;
    busy.fit = Fit::now;
    busy.node = 0;
    TaskSpec two;
    two.per_rank.cores = 2;
    c.reserve(two, busy);
    const Placement p = step.place(t, c, kNow);
    CHECK(p.node == 1);
    REQUIRE(step.explanation() != nullptr);
    CHECK(step.explanation()->basis == "fallback least-allocated (no telemetry)");
    c.release(two, busy);
    CHECK(step.place(t, c, kNow).node == 0);  // equal allocation: the first node
    CHECK(step.explanation()->basis ==
          "fallback least-allocated (telemetry 400 s old, past max_stale 300 s)");
  }
  {
    // The node reports, but its link to the task's source was last measured long ago (the
    // probe target went down): the link's age counts.
    ClusterState c(nodes_of(1));
    report(c, 0, 100);
    c.facts(0).links[0].measured = kNow - 50s;
    step.place(t, c, kNow);
    REQUIRE(step.explanation() != nullptr);
    CHECK(step.explanation()->basis == "analytic (telemetry 50 s old)");
    c.facts(0).links[0].measured = kNow - 600s;
    step.place(t, c, kNow);
    CHECK(step.explanation()->basis ==
          "fallback least-allocated (telemetry 600 s old, past max_stale 300 s)");
  }
  {
    // Telemetry but no bandwidth measured to the task's source.
    ClusterState c(nodes_of(1));
    report(c, 0, 100);
    c.facts(0).links[0].down_Bps = kUnknown;
    step.place(t, c, kNow);
    REQUIRE(step.explanation() != nullptr);
    CHECK(step.explanation()->basis ==
          "fallback least-allocated (no bandwidth measured from 'store1')");
  }
  {
    // An estimated node beats every fallback node, even a much emptier one.
    ClusterState c(nodes_of(2));
    report(c, 1, 1);  // 1 Mbit/s: 800 s, still estimated
    Placement busy;
    busy.fit = Fit::now;
    busy.node = 1;
    TaskSpec three;
    three.per_rank.cores = 3;
    c.reserve(three, busy);
    CHECK(step.place(t, c, kNow).node == 1);
  }
}

TEST_CASE("Schedulers.NetworkAware.ModelRanksThePrefilteredNodes") {
  const std::string path = write_rx_model();
  ClusterState c(nodes_of(3));
  report(c, 0, 200, 1s, 150);  // the best link, but busy: the model says 100 s
  report(c, 1, 100, 1s, 5);    // a quiet node: 1 s
  report(c, 2, 10, 1s, 5);     // quiet but slow: outside a prefilter of 2
  const TaskSpec t = fetch_task();
  {
    auto policy = make("network-aware", {option("model", path)});
    REQUIRE_MESSAGE(policy.ok(), policy.status().message());
    PlacementStep step(**policy);
    CHECK(step.place(t, c, kNow).node == 1);
    REQUIRE(step.explanation() != nullptr);
    CHECK(step.explanation()->basis == "model " + path);
    CHECK(step.explanation()->candidates[0].predicted_s == doctest::Approx(1));
    CHECK(step.explanation()->candidates[1].predicted_s == doctest::Approx(1));  // node 2
  }
  {
    // A prefilter of 1: only the analytic best sees the model; it wins, the rest rank behind.
    auto policy = make("network-aware", {option("model", path), option("prefilter", "1")});
    REQUIRE(policy.ok());
    PlacementStep step(**policy);
    CHECK(step.place(t, c, kNow).node == 0);
    CHECK(step.explanation()->candidates[0].predicted_s == doctest::Approx(100));
    CHECK(step.explanation()->candidates[1].node == 1);  // next by its analytic estimate
  }
  {
    // A stale node in the prefilter keeps its analytic estimate.
    report(c, 1, 100, 45s, 5);
    auto policy = make("network-aware", {option("model", path)});
    REQUIRE(policy.ok());
    PlacementStep step(**policy);
    const Placement p = step.place(t, c, kNow);
    // Node 1's stale analytic estimate (about 9 s) beats node 0's 100 s, not node 2's 1 s.
    CHECK(p.node == 2);
    CHECK(step.explanation()->basis == "model " + path);
  }
  std::filesystem::remove(path);
}

// A log_ratio model corrects the analytic estimate; where there is none to correct (a task that
// moves nothing and declares no CPU: an estimate of 0 s) it predicts nothing, and those nodes
// rank by their analytic estimate behind the predicted ones, never with a NaN score.
TEST_CASE("Schedulers.NetworkAware.ALogRatioModelWithoutAnEstimateToCorrectFallsBack") {
  const std::string path = write_ratio_model(2);
  ClusterState c(nodes_of(3));
  report(c, 0, 10);
  report(c, 1, 200);
  report(c, 2, 50);
  auto policy = make("network-aware", {option("model", path)});
  REQUIRE_MESSAGE(policy.ok(), policy.status().message());
  PlacementStep step(**policy);
  CHECK(step.place(fetch_task(), c, kNow).node == 1);
  REQUIRE(step.explanation() != nullptr);
  CHECK(step.explanation()->basis == "model " + path);
  const double fast = step.explanation()->candidates[0].predicted_s;
  CHECK(fast == doctest::Approx(2 * (100e6 / (200e6 / 8) + 1)).epsilon(0.05));

  TaskSpec nothing;
  nothing.id = 8;
  nothing.name = "idle";
  const Placement p = step.place(nothing, c, kNow);
  CHECK(p.node >= 0);
  REQUIRE(step.explanation() != nullptr);
  for (const ExplainedCandidate& e : step.explanation()->candidates)
    CHECK_FALSE(std::isnan(e.predicted_s));
  CHECK(step.explanation()->basis ==
        "analytic (the model predicts nothing here: no estimate to correct)");
  std::filesystem::remove(path);
}

TEST_CASE("Schedulers.NetworkAware.OptionsAndAModelThatDoesNotLoad") {
  auto bad = make("network-aware", {option("model", "/nonexistent/m.json")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("wf.yaml:3:12: 'model' of placement policy 'network-aware'") !=
        std::string::npos);
  CHECK(bad.status().message().find("/nonexistent/m.json") != std::string::npos);
  const std::string junk = temp_path("junk.json");
  std::ofstream(junk) << "{\"not\": \"a model\"}";
  bad = make("network-aware", {option("model", junk)});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find(junk) != std::string::npos);
  std::filesystem::remove(junk);

  for (const char* n : {"0", "257", "1.5"}) {
    auto r = make("network-aware", {option("prefilter", n)});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("'prefilter' of placement policy 'network-aware' must be a "
                                    "whole number in 1..256") != std::string::npos);
  }
  auto r = make("network-aware", {option("max_age", "1m"), option("max_stale", "30s")});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("must be at least 'max_age'") != std::string::npos);
  r = make("network-aware", {option("max_age", "10s"), option("prefilter", "8")});
  REQUIRE(r.ok());
  const auto& na = dynamic_cast<const NetworkAwarePolicy&>(**r);
  CHECK(na.options().max_age == 10s);
  CHECK(na.options().prefilter == 8);
  CHECK(na.options().model == nullptr);
  r = make("network-aware", {option("modle", "x")});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("did you mean 'model'") != std::string::npos);
}

TEST_CASE("Schedulers.NetworkAware.ManyNodesKeepTheAnalyticBest") {
  // 1,000 nodes, a model that prefers quiet nodes: the chosen node is among the prefilter's 32
  // best analytic estimates, and the explanation holds nine candidates.
  const std::string path = write_rx_model();
  ClusterState c(nodes_of(1000));
  for (int i = 0; i < 1000; ++i) report(c, i, 10 + i, 1s, i % 7 == 0 ? 5 : 100);
  auto policy = make("network-aware", {option("model", path)});
  REQUIRE(policy.ok());
  PlacementStep step(**policy);
  const Placement p = step.place(fetch_task(), c, kNow);
  // The 32 fastest links are nodes 968..999; the quiet ones among them (i % 7 == 0) win, the
  // first of them (ties to the first node) is 973.
  CHECK(p.node == 973);
  REQUIRE(step.explanation() != nullptr);
  CHECK(step.explanation()->candidates.size() == PlacementExplanation::kMaxCandidates);
  std::filesystem::remove(path);
}

TEST_CASE("Schedulers.NetworkCost.ZoneCostsFromTheTopology") {
  OptionEntry topo;
  topo.key = "topology";
  topo.key_at = {"wf.yaml", 4, 3};
  topo.value.kind = OptionValue::Kind::map;
  auto map_of = [](std::vector<std::pair<std::string, std::string>> kv) {
    OptionValue v;
    v.kind = OptionValue::Kind::map;
    for (auto& [k, x] : kv) {
      OptionEntry e;
      e.key = k;
      e.value.text = x;
      v.items.push_back(e);
    }
    return v;
  };
  auto entry = [](std::string key, OptionValue value) {
    OptionEntry e;
    e.key = std::move(key);
    e.key_at = {"wf.yaml", 5, 5};
    e.value = std::move(value);
    return e;
  };
  topo.value.items.push_back(entry("zones", map_of({{"n0", "east"},
                                                    {"n1", "west"},
                                                    {"n2", "central"},
                                                    {"store1", "west"},
                                                    {"sink", "central"}})));
  topo.value.items.push_back(entry("costs", map_of({{"east-west", "10"}, {"west-central", "3"}})));
  PolicyContext ctx;
  ctx.source_names = {"store1", "sink"};
  auto policy = make("network-cost", {topo}, ctx);
  REQUIRE_MESSAGE(policy.ok(), policy.status().message());
  const auto& nc = dynamic_cast<const NetworkCostPolicy&>(**policy);
  ClusterState c(nodes_of(3));
  TaskSpec t = fetch_task();
  CHECK(nc.cost(t, c.view(0)) == 10);
  CHECK(nc.cost(t, c.view(1)) == 0);
  CHECK(nc.cost(t, c.view(2)) == 3);
  PlacementStep step(**policy);
  CHECK(step.place(t, c, kNow).node == 1);
  t.data.to = 1;  // and write to sink (central): west 0+3, central 3+0, east 10+100 (default)
  CHECK(nc.cost(t, c.view(0)) == 110);
  CHECK(nc.cost(t, c.view(1)) == 3);
  CHECK(nc.cost(t, c.view(2)) == 3);
  CHECK(step.place(t, c, kNow).node == 1);  // tie: the first

  OptionEntry wrong = topo;
  wrong.value.items.push_back(entry("zone", map_of({})));
  auto r = make("network-cost", {wrong}, ctx);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("takes zones, costs and default_cost, not 'zone'") !=
        std::string::npos);

  // A cost naming a zone no node or source is in (a typo) is refused where it was written.
  OptionEntry typo = topo;
  typo.value.items[1] = entry("costs", map_of({{"east-wset", "10"}}));
  r = make("network-cost", {typo}, ctx);
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(r.status().message().find(
            "'topology' of placement policy 'network-cost': "
            "zone 'wset' of cost 'east-wset' is no node's or source's zone "
            "in 'zones' (did you mean 'west'?); zones: east, west, central") != std::string::npos);
}

TEST_CASE("Schedulers.Random.SeededAndSpread") {
  auto a = make("random", {option("seed", "42")});
  auto b = make("random", {option("seed", "42")});
  auto other = make("random", {option("seed", "43")});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(other.ok());
  ClusterState c(nodes_of(8));
  std::vector<int> count(8, 0);
  int differ = 0;
  for (TaskId id = 0; id < 800; ++id) {
    TaskSpec t;
    t.id = id;
    PlacementStep sa(**a), sb(**b), so(**other);
    const int n = sa.place(t, c).node;
    CHECK(n == sb.place(t, c).node);
    differ += n != so.place(t, c).node ? 1 : 0;
    ++count[static_cast<std::size_t>(n)];
  }
  CHECK(differ > 600);
  for (int k : count) CHECK(k > 50);  // about 100 each
  CHECK_FALSE(make("random", {option("seed", "-1")}).ok());
}

TEST_CASE("Schedulers.NetworkAware.WaitsForABusyNodeDueSoonThatFinishesSooner") {
  // n0: 1000 Mbit/s, one core; n1: 20 Mbit/s, free. 100 MB: ~1.8 s on n0, ~41 s on n1.
  ClusterState c(nodes_of(2, 1));
  report(c, 0, 1000);
  report(c, 1, 20);
  NetworkAwarePolicy::Options o;
  o.source_names = {"store1"};
  o.wait = 0.1;
  NetworkAwarePolicy policy(o);
  PlacementStep step(policy);
  TaskSpec first = fetch_task();
  first.id = 1;
  const Placement p1 = step.place(first, c, kNow);
  REQUIRE(p1.fit == Fit::now);
  CHECK(p1.node == 0);
  CHECK_FALSE(p1.waiting_for_better);
  REQUIRE(step.explanation() != nullptr);
  CHECK(step.explanation()->basis == "analytic (no model)");
  c.reserve(first, p1);  // n0 busy until ~1.8 s from now
  // The next task would take ~41 s on n1 now, ~3.6 s on n0 after the first: it waits.
  const Placement p2 = step.place(fetch_task(), c, kNow + 100ms);
  CHECK(p2.fit == Fit::later);
  CHECK(p2.waiting_for_better);
  // Once n0's task is past its due time (it runs late), n0 is no longer waited for.
  const Placement p3 = step.place(fetch_task(), c, kNow + 10s);
  CHECK(p3.fit == Fit::now);
  CHECK(p3.node == 1);
  // `chorus why` says how long it waited (the basis, journaled with the placement).
  REQUIRE(step.explanation() != nullptr);
  CHECK(step.explanation()->basis == "analytic (no model); waited 9.90 s for a busy node first");
  // With `wait: off` the policy never waits.
  NetworkAwarePolicy::Options off;
  off.source_names = {"store1"};
  off.wait = -1;
  NetworkAwarePolicy plain(off);
  PlacementStep plain_step(plain);
  const Placement p4 = plain_step.place(fetch_task(), c, kNow + 100ms);
  CHECK(p4.fit == Fit::now);
  CHECK(p4.node == 1);
}

TEST_CASE("Schedulers.NetworkAware.WaitOptionIsAFractionBelowOneOrOff") {
  for (const char* bad : {"1.5", "-0.1", "1", "of", "0.1s", ""}) {
    CAPTURE(bad);
    auto r = make("network-aware", {option("wait", bad)});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("'wait' of placement policy 'network-aware' is the gain a "
                                    "busy node must promise, a fraction in [0, 1), or 'off' "
                                    "(never wait for a busy node), got '" +
                                    std::string(bad) + "'") != std::string::npos);
  }
  auto r = make("network-aware", {option("wait", "0.1")});
  REQUIRE(r.ok());
  CHECK(dynamic_cast<const NetworkAwarePolicy&>(**r).options().wait == doctest::Approx(0.1));
  auto off = make("network-aware", {option("wait", "off")});
  REQUIRE(off.ok());
  CHECK(dynamic_cast<const NetworkAwarePolicy&>(**off).options().wait < 0);
  auto plain = make("network-aware", {});
  REQUIRE(plain.ok());
  CHECK(dynamic_cast<const NetworkAwarePolicy&>(**plain).options().wait == 0);  // the default
}
