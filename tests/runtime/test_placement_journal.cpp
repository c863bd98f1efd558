// The coordinator journals the network-aware policy's placement records with each attempt's
// `running` event (one append per loop turn, no extra one per task); the C++ API's data sources
// and data movement; the graph check of source ids.
#include <doctest/doctest.h>

#include <cmath>

#include "api/tasks.hpp"
#include "runtime/agent/live_node_placement.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/node_facts_source.hpp"
#include "schedulers/netaware/network_aware_policy.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "support/memory_journal.hpp"
#include "support/scripted_launcher.hpp"

using namespace chorus;
using namespace std::chrono_literals;
using chorus::test::ManualClock;
using chorus::test::MemoryJournal;
using chorus::test::ScriptedLauncher;

namespace {

// Telemetry as the agents backend's source writes it: every node reported just now, node i
// with `mbps[i]` Mbit/s to source 0.
class FixedTelemetry final : public NodeFactsSource {
 public:
  explicit FixedTelemetry(std::vector<double> mbps) : mbps_(std::move(mbps)) {}
  void set_probe_targets(std::span<const DataSource> sources) override { targets = sources.size(); }
  bool update(std::span<NodeFacts> facts, TimePoint now) override {
    for (std::size_t i = 0; i < facts.size() && i < mbps_.size(); ++i) {
      NodeFacts& f = facts[i];
      f.updated = now;
      f.rx_Bps = f.tx_Bps = 0;
      f.links.resize(1);
      f.links[0].rtt_s = 0.002;
      f.links[0].down_Bps = f.links[0].up_Bps = mbps_[i] * 1e6 / 8;
      f.links[0].measured = now;
      ++f.revision;
    }
    ++updates;
    return true;
  }
  std::size_t targets = 0;
  int updates = 0;

 private:
  std::vector<double> mbps_;
};

}  // namespace

TEST_CASE("Runtime.PlacementJournal.DataSourcesFromTheApi") {
  WorkflowGraph g;
  auto store = add_source(g, "store1", "10.0.0.5", 9000);
  REQUIRE(store.ok());
  CHECK(*store == 0u);
  auto sink = add_source(g, "sink", "10.0.0.6", 9001, SourceProbe::connect);
  REQUIRE(sink.ok());
  CHECK(*sink == 1u);
  CHECK(g.sources[1].probe == SourceProbe::connect);
  CHECK_FALSE(add_source(g, "store1", "h", 1).ok());
  CHECK(add_source(g, "x", "h", 0).status().message().find("port 0 is not in 1..65535") !=
        std::string::npos);
  CHECK_FALSE(add_source(g, "", "h", 1).ok());
  CHECK_FALSE(add_source(g, "y", "", 1).ok());
  DataMovement d;
  d.input_bytes = 64'000'000;
  d.from = *store;
  d.output_bytes = 1'000;
  d.to = *sink;
  d.cpu = 2s;
  const TaskId t = g.add(with_data(command_task("fetch", {"true"}), d));
  CHECK(g.tasks[t].data.input_bytes == 64'000'000u);
  CHECK(g.tasks[t].data.to == 1u);
  CHECK(validate_graph(g).ok());
  g.tasks[t].data.from = 5;
  const Status bad = validate_graph(g);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message() ==
        "task 'fetch' moves data from source #5, but the workflow declares 2 "
        "source(s)");
}

TEST_CASE("Runtime.PlacementJournal.RecordsRideWithTheRunningEvent") {
  ManualClock clock;
  ScriptedLauncher launcher{clock};
  MemoryJournal journal;
  RunInfo info;
  info.workflow_name = "netaware";
  const RunInfo run = journal.create_run(info).value();
  FifoQueue queue;
  NetworkAwarePolicy::Options o;
  o.source_names = {"store1"};
  o.wait = -1;  // `wait: off`: b takes the next best node rather than wait for the fast one
  NetworkAwarePolicy placement(o);
  CancelToken cancel;
  const std::vector<NodeInfo> nodes{NodeInfo{"slow", {2, 0, 0}}, NodeInfo{"fast", {2, 0, 0}},
                                    NodeInfo{"mid", {2, 0, 0}}};
  FixedTelemetry telemetry({10, 200, 50});
  CoordinatorOptions options;
  options.clock = &clock;
  options.log_dir = "/nonexistent/logs";
  options.facts = &telemetry;

  WorkflowGraph g;
  const SourceId store = add_source(g, "store1", "10.0.0.5", 9000).value();
  DataMovement d;
  d.input_bytes = 100'000'000;
  d.from = store;
  d.cpu = 1s;
  TaskSpec a = with_data(shell_task("a", "true"), d);
  a.per_rank.cores = 2;
  a.retries = 1;
  g.add(a);
  TaskSpec b = a;
  b.name = "b";
  b.retries = 0;
  g.add(b);
  clock.then([&] {
    // a took the fast node, b (the fast node full) the next best.
    REQUIRE(launcher.running("a"));
    REQUIRE(launcher.running("b"));
    launcher.exit("a", 1);  // a fails: its retry is placed again, and journaled again
  });
  clock.then([&] {
    REQUIRE(launcher.running("a"));
    launcher.exit("a");
    launcher.exit("b");
  });
  LauncherTable launchers{};
  launchers.fill(&launcher);
  Coordinator c(g, journal, run.id, nodes, queue, placement, launchers, options, &cancel);
  auto result = c.run(nullptr);
  REQUIRE_MESSAGE(result.ok(), result.status().message());
  CHECK(result->status == RunStatus::succeeded);
  CHECK(telemetry.updates > 0);

  auto rows = journal.placements(run.id);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  const PlacementRow& a1 = (*rows)[0];
  CHECK(a1.name == "a");
  CHECK(a1.attempt == 1);
  CHECK(a1.policy == "network-aware");
  CHECK(a1.basis == "analytic (no model)");
  REQUIRE(a1.candidates.size() == 3);
  CHECK(a1.candidates[0].node == "fast");
  CHECK(a1.candidates[1].node == "mid");
  CHECK(a1.candidates[2].node == "slow");
  CHECK(a1.candidates[0].predicted_s < a1.candidates[1].predicted_s);
  REQUIRE(a1.candidates[0].features.size() == kFeatureCount);
  CHECK(a1.candidates[0].features[static_cast<std::size_t>(Feature::down_mbps)] ==
        doctest::Approx(200));
  const PlacementRow& a2 = (*rows)[1];
  CHECK(a2.attempt == 2);
  CHECK(a2.candidates[0].node == "fast");
  const PlacementRow& b1 = (*rows)[2];
  CHECK(b1.name == "b");
  REQUIRE(b1.candidates.size() == 2);  // the fast node was full
  CHECK(b1.candidates[0].node == "mid");
  // The records went with the running events: each append that holds a record holds its event.
  const auto events = journal.events(run.id).value();
  int running = 0;
  for (const auto& e : events) running += e.state == TaskState::running ? 1 : 0;
  CHECK(running == 3);
}

TEST_CASE("Runtime.PlacementJournal.APolicyThatExplainsNothingStillGivesTrainingRows") {
  // Under first-fit (no explanation), a data task with telemetry is journaled with the chosen
  // node's features and no estimate; a task that moves nothing is not.
  ManualClock clock;
  ScriptedLauncher launcher{clock};
  MemoryJournal journal;
  RunInfo info;
  info.workflow_name = "observed";
  const RunInfo run = journal.create_run(info).value();
  FifoQueue queue;
  FirstFit placement;
  CancelToken cancel;
  const std::vector<NodeInfo> nodes{NodeInfo{"slow", {2, 0, 0}}, NodeInfo{"fast", {2, 0, 0}}};
  FixedTelemetry telemetry({10, 200});
  CoordinatorOptions options;
  options.clock = &clock;
  options.log_dir = "/nonexistent/logs";
  options.facts = &telemetry;

  WorkflowGraph g;
  const SourceId store = add_source(g, "store1", "10.0.0.5", 9000).value();
  DataMovement d;
  d.input_bytes = 10'000'000;
  d.from = store;
  g.add(with_data(shell_task("moves", "true"), d));
  g.add(shell_task("computes", "true"));
  clock.then([&] {
    launcher.exit("moves");
    launcher.exit("computes");
  });
  LauncherTable launchers{};
  launchers.fill(&launcher);
  Coordinator c(g, journal, run.id, nodes, queue, placement, launchers, options, &cancel);
  auto result = c.run(nullptr);
  REQUIRE_MESSAGE(result.ok(), result.status().message());

  auto rows = journal.placements(run.id);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  const PlacementRow& r = (*rows)[0];
  CHECK(r.name == "moves");
  CHECK(r.policy == "first-fit");
  CHECK(r.basis == "features only (placed by first-fit)");
  REQUIRE(r.candidates.size() == 1);
  CHECK(r.candidates[0].node == "slow");  // first fit
  CHECK(std::isnan(r.candidates[0].predicted_s));
  REQUIRE(r.candidates[0].features.size() == kFeatureCount);
  CHECK(r.candidates[0].features[static_cast<std::size_t>(Feature::down_mbps)] ==
        doctest::Approx(10));
}

TEST_CASE("Runtime.PlacementJournal.TheAgentsWrapperKeepsTheBatchHooks") {
  // With agents the run's policy is wrapped in LiveNodePlacement: network-aware must still be
  // scored in one batch (its model path) and explain its decisions, not fall to per-node score().
  ManualClock clock;
  ScriptedLauncher launcher{clock};
  MemoryJournal journal;
  RunInfo info;
  info.workflow_name = "wrapped";
  const RunInfo run = journal.create_run(info).value();
  FifoQueue queue;
  NetworkAwarePolicy::Options o;
  o.source_names = {"store1"};
  auto placement = live_nodes_only(std::make_unique<NetworkAwarePolicy>(o),
                                   [](std::string_view) { return true; });
  REQUIRE(placement->batch_scores());
  CancelToken cancel;
  const std::vector<NodeInfo> nodes{NodeInfo{"slow", {2, 0, 0}}, NodeInfo{"fast", {2, 0, 0}}};
  FixedTelemetry telemetry({10, 200});
  CoordinatorOptions options;
  options.clock = &clock;
  options.log_dir = "/nonexistent/logs";
  options.facts = &telemetry;

  WorkflowGraph g;
  const SourceId store = add_source(g, "store1", "10.0.0.5", 9000).value();
  DataMovement d;
  d.input_bytes = 10'000'000;
  d.from = store;
  g.add(with_data(shell_task("moves", "true"), d));
  clock.then([&] { launcher.exit("moves"); });
  LauncherTable launchers{};
  launchers.fill(&launcher);
  Coordinator c(g, journal, run.id, nodes, queue, *placement, launchers, options, &cancel);
  auto result = c.run(nullptr);
  REQUIRE_MESSAGE(result.ok(), result.status().message());
  auto rows = journal.placements(run.id);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].basis == "analytic (no model)");
  REQUIRE((*rows)[0].candidates.size() == 2);
  CHECK((*rows)[0].candidates[0].node == "fast");
  CHECK(std::isfinite((*rows)[0].candidates[0].predicted_s));
}
