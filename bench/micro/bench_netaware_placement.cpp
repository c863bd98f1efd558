// One placement decision over 1,000 nodes that all fit, every node with fresh telemetry (a link
// to the task's source, background traffic): least-allocated (the Kubernetes-default half, the
// baseline), network-aware without a model (the analytic estimate for every node) and with a
// model of 200 depth-6 trees over the 21 features (the analytic estimate for all, the model for
// the best `prefilter` = 32), each through PlacementStep as the coordinator calls it, with the
// explanation for the journal. Target (issue 14): <= 200 us per decision at 1,000 nodes.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include "schedulers/netaware/features.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/placement_step.hpp"
#include "schedulers/policy_registry.hpp"

namespace {

using namespace chorus;
using namespace std::chrono_literals;

const TimePoint kNow = TimePoint{} + 1000s;

ClusterState telemetry_cluster(std::size_t n) {
  std::vector<NodeInfo> nodes;
  for (std::size_t i = 0; i < n; ++i) nodes.push_back({"n" + std::to_string(i), {16, 65536, 0}});
  ClusterState c(std::move(nodes));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mbps(10, 1000), rx(0, 500), rtt(0.0002, 0.05);
  for (std::size_t i = 0; i < n; ++i) {
    NodeFacts& f = c.facts(static_cast<int>(i));
    f.updated = kNow - 2s;
    f.rx_Bps = rx(rng) * 1e6 / 8;
    f.tx_Bps = rx(rng) * 1e6 / 8;
    f.backlog_bytes = 1000;
    f.drops_per_s = 0;
    f.running_cores = 2;
    f.child_cpu = 1.5;
    f.links.resize(1);
    f.links[0].rtt_s = rtt(rng);
    f.links[0].down_Bps = f.links[0].up_Bps = mbps(rng) * 1e6 / 8;
    f.links[0].measured = f.updated;
  }
  return c;
}

// A forest of `trees` complete trees of depth `depth`, random splits over the features (the
// file format of `chorus model train`, docs/jct-model.md).
std::string write_model(int trees, int depth) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> feat(0, kFeatureCount - 1);
  std::uniform_real_distribution<double> cond(0, 100), leaf(-1, 1);
  const auto names = feature_names();
  std::string out =
      R"({"format":"chorus-jct-model","version":1,"target":"seconds",)"
      R"("base_score":5,"trained_on":{"rows":0,"runs":0,"created":"bench"},"features":[)";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i ? ",\"" : "\"") + std::string(names[i]) + "\"";
  }
  out += "],\"trees\":[";
  for (int t = 0; t < trees; ++t) {
    int next = 0;
    std::function<std::string(int)> node = [&](int d) -> std::string {
      const int id = next++;
      if (d == depth)
        return "{\"nodeid\":" + std::to_string(id) + ",\"leaf\":" + std::to_string(leaf(rng)) + "}";
      const std::string split = std::string(names[feat(rng)]);
      const double c = cond(rng);
      const std::string a = node(d + 1);
      const int yes = id + 1;
      const int no = next;
      const std::string b = node(d + 1);
      return "{\"nodeid\":" + std::to_string(id) + ",\"depth\":" + std::to_string(d) +
             ",\"split\":\"" + split + "\",\"split_condition\":" + std::to_string(c) +
             ",\"yes\":" + std::to_string(yes) + ",\"no\":" + std::to_string(no) +
             ",\"missing\":" + std::to_string(yes) + ",\"children\":[" + a + "," + b + "]}";
    };
    out += (t ? "," : "") + node(0);
  }
  out += "]}";
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("chorus-bench-model-" + std::to_string(::getpid()) + ".json"))
                               .string();
  std::ofstream(path) << out;
  return path;
}

void decide(benchmark::State& state, const std::string& policy, const std::string& model,
            int prefilter) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ClusterState cluster = telemetry_cluster(n);
  PolicyOptions options;
  auto opt = [&](const std::string& key, const std::string& value) {
    OptionEntry e;
    e.key = key;
    e.value.text = value;
    options.entries.push_back(e);
  };
  if (!model.empty()) opt("model", model);
  if (prefilter > 0) opt("prefilter", std::to_string(prefilter));
  auto made = PolicyRegistry::with_builtins().make_placement(policy, options);
  if (!made.ok()) {
    state.SkipWithError(made.status().message().c_str());
    return;
  }
  PlacementStep step(**made);
  TaskSpec task;
  task.id = 1;
  task.per_rank.cores = 1;
  task.data.input_bytes = 64'000'000;
  task.data.from = 0;
  task.data.cpu = 2s;
  int chosen = 0;
  for (auto _ : state) {
    const Placement p = step.place(task, cluster, kNow);
    chosen += p.node;
    benchmark::DoNotOptimize(step.explanation());
  }
  benchmark::DoNotOptimize(chosen);
  state.counters["nodes"] = static_cast<double>(n);
}

void BM_LeastAllocated(benchmark::State& state) {
  decide(state, "least-allocated", "", 0);
}
void BM_NetworkAwareAnalytic(benchmark::State& state) {
  decide(state, "network-aware", "", 0);
}
void BM_NetworkAwareModel200x6(benchmark::State& state) {
  static const std::string model = write_model(200, 6);
  decide(state, "network-aware", model, 32);
}

BENCHMARK(BM_LeastAllocated)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NetworkAwareAnalytic)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NetworkAwareModel200x6)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
