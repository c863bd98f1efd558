// Telemetry end to end over real ZeroMQ: two agents (threads of this process running the real
// agent loop, with their collector and probe threads) report to a real AgentLauncher; a real
// data server on 127.0.0.1 is their probe target; the agents backend's facts source writes the
// NodeFacts a placement policy reads.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "api/tasks.hpp"
#include "runtime/agent/agent.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/netprobe/data_server.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "support/agent_thread.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::AgentThread;
using chorus::test::TempDir;

namespace {

AgentOptions fast_agent(const AgentLauncher& l, const std::string& node) {
  AgentOptions o;
  o.endpoint = l.endpoint();
  o.keys = read_agent_keys(l.key_dir()).value();
  o.node = node;
  o.capacity = {4, 0, 0};
  o.silence_timeout = std::chrono::seconds(10);
  o.probe_budget.rtt_interval = std::chrono::milliseconds(100);
  return o;
}

bool complete(const NodeFacts& f) {
  return f.links.size() == 2 && !std::isnan(f.links[0].rtt_s) && !std::isnan(f.links[0].down_Bps) &&
         !std::isnan(f.links[0].up_Bps) && !std::isnan(f.links[1].rtt_s) && !std::isnan(f.rx_Bps) &&
         !std::isnan(f.tx_Bps) && !std::isnan(f.child_cpu) && !std::isnan(f.running_cores);
}

}  // namespace

TEST_CASE("Runtime.AgentTelemetry.BothNodesFactsCarryLinksAndInterfaceRatesWithinAFewBeats") {
  auto server = netprobe::DataServer::listen("127.0.0.1:0");
  REQUIRE(server.ok());
  std::thread serving([&] { (void)(*server)->run(); });
  TempDir dir;
  AgentLauncherOptions lo;
  lo.key_dir = dir / "keys";
  lo.heartbeat = std::chrono::milliseconds(200);
  auto launcher = AgentLauncher::start(lo);
  REQUIRE_MESSAGE(launcher.ok(), launcher.status().message());
  AgentLauncher& agents = **launcher;
  auto a = std::make_unique<AgentThread>(fast_agent(agents, "a"));
  auto b = std::make_unique<AgentThread>(fast_agent(agents, "b"));
  auto nodes = agents.wait_for_nodes({"a", "b"}, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());
  auto backend = attach_agents_backend(agents, *nodes);
  NodeFactsSource* source = backend->facts_source();
  REQUIRE(source != nullptr);
  std::vector<DataSource> sources(2);
  sources[0] = {"store", "127.0.0.1", (*server)->port(), SourceProbe::data_server, 0, 0};
  sources[1] = {"plain", "127.0.0.1", (*server)->port(), SourceProbe::connect, 0, 0};
  source->set_probe_targets(sources);

  // A task holding 2 cores and burning one on node a: running cores and children's CPU.
  TaskSpec burn =
      shell_task("burn", "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do :; done");
  burn.id = 0;
  burn.per_rank.cores = 2;
  LaunchRequest req;
  req.spec = &burn;
  req.node = "a";
  req.workdir = dir.path();
  REQUIRE(agents.launch(req).ok());
  agents.flush();

  std::vector<NodeFacts> facts(2);
  std::vector<StateUpdate> updates;
  double cpu_seen = 0, cores_seen = 0;
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < until) {
    agents.poll(updates);
    source->update(facts, Clock::now());
    cpu_seen = std::max(cpu_seen, std::isnan(facts[0].child_cpu) ? 0.0 : facts[0].child_cpu);
    cores_seen =
        std::max(cores_seen, std::isnan(facts[0].running_cores) ? 0.0 : facts[0].running_cores);
    if (complete(facts[0]) && complete(facts[1]) && cpu_seen > 0.3 && cores_seen == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    const NodeFacts& f = facts[i];
    CHECK(complete(f));
    CHECK(f.revision > 0);
    CHECK(f.updated != TimePoint{});
    REQUIRE(f.links.size() == 2);
    CHECK(f.links[0].rtt_s > 0);
    CHECK(f.links[0].down_Bps > 1e6);  // loopback: far above a megabyte per second
    CHECK(f.links[0].up_Bps > 1e6);
    CHECK(f.links[0].measured != TimePoint{});
    CHECK(f.links[0].measured <= Clock::now());
    CHECK(f.links[1].rtt_s > 0);  // connect time only
    CHECK(std::isnan(f.links[1].down_Bps));
    CHECK(f.rx_Bps >= 0);
    CHECK(std::isnan(f.cpu_quota));  // this test process has no CPU quota
  }
  CHECK(cores_seen == 2);
  CHECK(cpu_seen > 0.3);  // the burning task, seen through its process group
  CHECK(facts[1].running_cores == 0);

  // Nothing new between two updates: nothing rewritten.
  const auto rev = facts[0].revision;
  CHECK_FALSE(source->update(facts, Clock::now()));
  CHECK(facts[0].revision == rev);

  // b stops: its facts keep their last arrival time while a's go on.
  b.reset();
  const TimePoint b_updated = facts[1].updated;
  const TimePoint a_before = facts[0].updated;
  const auto later = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < later) {
    agents.poll(updates);
    source->update(facts, Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(facts[1].updated == b_updated);
  CHECK(facts[0].updated > a_before);

  // New targets: the old links are forgotten, and the agent measures the new list.
  source->set_probe_targets(std::span<const DataSource>(sources).subspan(1));
  agents.poll(updates);
  source->update(facts, Clock::now());
  bool relisted = false;
  const auto again = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < again && !relisted) {
    agents.poll(updates);
    source->update(facts, Clock::now());
    relisted = facts[0].links.size() == 1 && !std::isnan(facts[0].links[0].rtt_s);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(relisted);
  CHECK(facts[1].links.empty());  // b is gone: nothing of the new list from it

  agents.shutdown_agents();
  a.reset();
  (*server)->stop();
  serving.join();
}
