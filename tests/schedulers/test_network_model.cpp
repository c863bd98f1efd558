// The simulator's modelled network (schedulers/sim/network_model.hpp): its generator and JSON
// description, the telemetry it writes, the true runtimes it gives, determinism under a seed, and
// that a placement reading the facts beats first-fit on a network with one clearly fastest node.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "schedulers/netaware/features.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/sim/network_model.hpp"
#include "schedulers/sim/simulator.hpp"

namespace chorus::sim {
namespace {

// Ranks nodes by the probed bandwidth from the task's source (higher is better), as a
// network-aware policy would; nodes that never reported rank last.
class FastestLink : public PlacementPolicy {
 public:
  std::string_view name() const override { return "fastest-link"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec& task, const NodeView& node) const override {
    if (node.facts == nullptr || task.data.from >= node.facts->links.size()) return -1;
    const double bw = node.facts->links[task.data.from].down_Bps;
    return std::isnan(bw) ? -1 : bw;
  }
};

// One source; node `fast` at 1000 Mbit/s, the others at 20; no background.
NetworkModel one_fast_node(std::size_t nodes, std::size_t fast) {
  NetworkModel m;
  m.sources = {"store"};
  m.noise = 0.05;
  for (std::size_t i = 0; i < nodes; ++i) {
    ModelNode n;
    n.links.push_back({(i == fast ? 1000e6 : 20e6) / 8, 0.002});
    n.background = {0.0};
    m.nodes.push_back(n);
  }
  return m;
}

// `jobs` jobs of one 1-core task reading 50 MB from source 0, one every 10 s.
Workload fetches(int jobs) {
  Workload w;
  w.name = "fetches";
  for (int j = 0; j < jobs; ++j) {
    SimJob job;
    job.id = "j" + std::to_string(j);
    job.user = "u";
    job.arrival_s = 10.0 * j;
    SimTask t;
    t.runtime_s = 0.5;
    t.data.input_bytes = 50'000'000;
    t.data.from = 0;
    job.tasks.push_back(t);
    w.jobs.push_back(job);
  }
  return w;
}

SimCluster cluster_of(std::size_t nodes) {
  SimCluster c;
  for (std::size_t i = 0; i < nodes; ++i)
    c.nodes.push_back(NodeInfo{"n" + std::to_string(i), Resources{2, 0, 0}});
  return c;
}

double mean_response(const SimResult& r) {
  double sum = 0;
  for (const JobRecord& j : r.jobs) sum += j.response_s();
  return sum / static_cast<double>(r.jobs.size());
}

}  // namespace

TEST_CASE("Schedulers.NetworkModel.GeneratorIsSeededAndItsJsonRoundTrips") {
  auto a = generate_network("sources=3,bw=10:200,rtt=1:40,bg=0.5,seed=4", 6);
  auto b = generate_network("sources=3,bw=10:200,rtt=1:40,bg=0.5,seed=4", 6);
  auto c = generate_network("sources=3,bw=10:200,rtt=1:40,bg=0.5,seed=5", 6);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(c.ok());
  CHECK(a->nodes.size() == 6);
  CHECK(a->sources.size() == 3);
  CHECK(network_json(*a) == network_json(*b));
  CHECK(network_json(*a) != network_json(*c));
  for (const ModelNode& n : a->nodes) {
    for (const ModelLink& l : n.links) {
      CHECK(l.capacity_Bps >= 10e6 / 8 * 0.999);
      CHECK(l.capacity_Bps <= 200e6 / 8 * 1.001);
    }
    for (double bg : n.background) CHECK((bg >= 0 && bg <= 0.5 + 1e-9));
  }
  auto back = parse_network_json(network_json(*a), "net.json");
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(network_json(*back) == network_json(*a));
}

TEST_CASE("Schedulers.NetworkModel.BadDescriptionsAreRefusedByName") {
  auto bad = [](const std::string& text) {
    auto m = parse_network_json(text, "net.json");
    REQUIRE_FALSE(m.ok());
    return m.status().message();
  };
  CHECK(bad("[1").find("net.json: not a network description (not JSON") != std::string::npos);
  CHECK(bad(R"({"format": 1e999})").find("net.json: not a network description (not JSON") !=
        std::string::npos);
  CHECK(bad(R"({"format": 3})").find("net.json: not a network description") != std::string::npos);
  CHECK(bad(R"({"format": "x"})").find("net.json: not a network description") != std::string::npos);
  CHECK(bad(R"({"format": "chorus-sim-network", "version": 3})").find("version 3") !=
        std::string::npos);
  CHECK(
      bad(R"({"format": "chorus-sim-network", "version": 1, "sources": ["a"], "nodes": [{"links": []}]})")
          .find("net.json: /nodes/0/links: 0 links for 1 sources") != std::string::npos);
  CHECK(bad(R"({"format": "chorus-sim-network", "version": 1, "sources": ["a"],
               "nodes": [{"links": [{"mbps": 10, "rtt_ms": 1}], "background": [0.99]}]})")
            .find("/nodes/0/background: levels must be in [0, 0.95]") != std::string::npos);
  auto gen = generate_network("bw=5", 2);
  REQUIRE_FALSE(gen.ok());
  CHECK(gen.status().message().find("bw=5 is not LO:HI") != std::string::npos);
  auto key = generate_network("speed=1", 2);
  REQUIRE_FALSE(key.ok());
  CHECK(key.status().message().find("\"speed=1\" is not KEY=VALUE") != std::string::npos);
}

TEST_CASE("Schedulers.NetworkModel.FactsAreTheLastReportWithNoiseAndAge") {
  NetworkModel m = one_fast_node(2, 1);
  m.nodes[0].background = {0.5, 0.0};  // half the link taken in the first minute
  m.nodes[0].cpu_factor = 0.5;
  NodeFacts f;
  m.write_facts(f, 0, 30, 4, 1);
  REQUIRE(f.links.size() == 1);
  const double age = 30 - std::chrono::duration<double>(f.updated.time_since_epoch()).count();
  CHECK(age >= 0);
  CHECK(age < m.cadence_s);
  CHECK(f.links[0].down_Bps == doctest::Approx(10e6 / 8).epsilon(0.25));  // 20 Mbit/s x (1 - 0.5)
  CHECK(f.links[0].down_Bps != 10e6 / 8);                                 // measured, with noise
  CHECK(f.rx_Bps == doctest::Approx(0.5 * 20e6 / 8));
  CHECK(f.cpu_quota == doctest::Approx(2));
  CHECK(f.running_cores == 1);
  const std::uint64_t rev = f.revision;
  const LinkFacts first = f.links[0];
  m.write_facts(f, 0, 30 + 1e-6, 4, 2);  // same report: links unchanged, running cores updated
  CHECK(f.revision == rev);
  CHECK(f.links[0].down_Bps == first.down_Bps);
  CHECK(f.running_cores == 2);
  m.write_facts(f, 0, 90, 4, 0);  // the next minute: no background
  CHECK(f.revision > rev);
  CHECK(f.links[0].down_Bps == doctest::Approx(20e6 / 8).epsilon(0.25));
  CHECK(f.rx_Bps == 0);
  // A report written while one of the node's own transfers runs: the probe gets half the link,
  // the interface carries the other half.
  NodeFacts busy;
  m.write_facts(busy, 1, 30, 4, 1, 1);
  CHECK(busy.links[0].down_Bps == doctest::Approx(500e6 / 8).epsilon(0.25));
  CHECK(busy.rx_Bps == doctest::Approx(500e6 / 8));
}

TEST_CASE("Schedulers.NetworkModel.RuntimeIsTheTcpTransferPlusCpuOverShare") {
  NetworkModel m = one_fast_node(1, 1);
  m.nodes[0].background = {0.5};
  m.nodes[0].cpu_factor = 0.5;
  DataMovement d;
  d.input_bytes = 10'000'000;
  d.from = 0;
  // 20 Mbit/s x (1 - 0.5) = 1.25 MB/s, shared by 2 transfers; RTT 2 ms x (1 + 2 x 0.5);
  // quota 0.5 x 4 cores = 2 for 4 running cores: share 0.5, the first 50 ms of CPU unthrottled.
  // The pipe (2.5 KB) is below the first window: the transfer is its two round trips and the
  // bytes at the rate.
  const double expected = 0.008 + 10e6 / (1.25e6 / 2) + 0.05 + 2.95 / 0.5;
  CHECK(expected ==
        doctest::Approx(transfer_s(10e6, 1.25e6 / 2, 0.004, 0.004) + cpu_wall_s(3.0, 0.5)));
  CHECK(m.runtime_s(d, 3.0, 0, 10, 4, 4, 2) == doctest::Approx(expected));
}

TEST_CASE("Schedulers.NetworkModel.SameSeedSameRunsAndRows") {
  auto net = generate_network("sources=2,bg=0.6,seed=9", 4);
  REQUIRE(net.ok());
  Workload w = fetches(40);
  REQUIRE(assign_data(w, "in=1:100,out=0:10,seed=2", 2).ok());
  auto once = [&](std::vector<TrainingRow>& rows) {
    FifoQueue q;
    FastestLink p;
    SimOptions o;
    o.network = &*net;
    o.rows = &rows;
    auto r = simulate(w, cluster_of(4), q, p, o);
    REQUIRE(r.ok());
    return *r;
  };
  std::vector<TrainingRow> rows_a, rows_b;
  const SimResult a = once(rows_a);
  const SimResult b = once(rows_b);
  REQUIRE(rows_a.size() == 40);
  REQUIRE(rows_b.size() == 40);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) CHECK(a.jobs[i].finish_s == b.jobs[i].finish_s);
  for (std::size_t i = 0; i < rows_a.size(); ++i) {
    CHECK(rows_a[i].seconds == rows_b[i].seconds);
    CHECK(std::memcmp(rows_a[i].features.data(), rows_b[i].features.data(),
                      sizeof(FeatureVector)) == 0);
    CHECK(rows_a[i].seconds > 0.5);  // more than its CPU seconds: it moved data
  }
}

TEST_CASE("Schedulers.NetworkModel.APolicyReadingTheFactsBeatsFirstFit") {
  const NetworkModel net = one_fast_node(4, 3);
  const Workload w = fetches(20);
  SimOptions o;
  o.network = &net;
  FifoQueue q1, q2;
  FirstFit first_fit;
  FastestLink fastest;
  auto ff = simulate(w, cluster_of(4), q1, first_fit, o);
  auto fl = simulate(w, cluster_of(4), q2, fastest, o);
  REQUIRE(ff.ok());
  REQUIRE(fl.ok());
  // First-fit fetches over 20 Mbit/s (20 s), the facts-reader over 1000 (0.4 s), plus 0.5 s CPU.
  MESSAGE("mean response: first-fit " << mean_response(*ff) << " s, fastest-link "
                                      << mean_response(*fl) << " s");
  CHECK(mean_response(*ff) > 15);
  CHECK(mean_response(*fl) < 2);
}

TEST_CASE("Schedulers.NetworkModel.ANetworkOfAnotherSizeIsRefused") {
  const NetworkModel net = one_fast_node(3, 0);
  FifoQueue q;
  FirstFit p;
  SimOptions o;
  o.network = &net;
  auto r = simulate(fetches(2), cluster_of(4), q, p, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("the network model describes 3 nodes, the cluster has 4") !=
        std::string::npos);
}

}  // namespace chorus::sim
