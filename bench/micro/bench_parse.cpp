// Parse + validate + expand of generated workflows (workflows/workflow_loader.hpp).
// items/s = tasks of the resulting graph per second.
#include <benchmark/benchmark.h>

#include <string>

#include "workflows/workflow_loader.hpp"

namespace {

// `plain` tasks in chains of 10 (each after the previous), an 8-core-free sweep of `members`
// after the first task, and a reduce after the whole sweep.
std::string generate(int plain, int members) {
  std::string y = "name: bench\ndefaults: {cores: 1, timeout: 10m, retries: 1}\ntasks:\n";
  for (int i = 0; i < plain; ++i) {
    y += "  - name: t" + std::to_string(i) + "\n    command: [./step, --index, \"" +
         std::to_string(i) + "\"]\n    outputs: [out/" + std::to_string(i) + ".dat]\n";
    if (i % 10 != 0) y += "    after: [t" + std::to_string(i - 1) + "]\n";
  }
  if (members > 0) {
    y += "  - name: sweep\n    foreach: {part: \"range(0, " + std::to_string(members) +
         ")\"}\n    command: [./transform, \"{part}\", \"out/{part}.txt\"]\n"
         "    env: {PART: \"{part}\"}\n    after: [t0]\n"
         "  - name: reduce\n    command: \"cat out/*.txt | ./reduce\"\n    after: [sweep]\n";
  }
  return y;
}

void run(benchmark::State& state, const std::string& text) {
  chorus::WorkflowLoadOptions options;
  options.base_dir = "/tmp";
  options.largest_node = {64, 256 * 1024, 0};
  std::size_t tasks = 0;
  for (auto _ : state) {
    auto graph = chorus::parse_workflow_text(text, "bench.yaml", options);
    if (!graph.ok()) {
      state.SkipWithError(graph.status().message().c_str());
      return;
    }
    tasks = graph->tasks.size();
    benchmark::DoNotOptimize(graph->tasks.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * tasks));
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["bytes"] = static_cast<double>(text.size());
}

// 10,000 tasks: 1,999 plain tasks in `after` chains, a sweep of 8,000 and a reduce.
void BM_ParseMixed10k(benchmark::State& state) {
  static const std::string text = generate(1999, 8000);
  run(state, text);
}
BENCHMARK(BM_ParseMixed10k)->Unit(benchmark::kMillisecond);

// 10,000 tasks each written out: the YAML-reading cost per task.
void BM_ParsePlain10k(benchmark::State& state) {
  static const std::string text = generate(10000, 0);
  run(state, text);
}
BENCHMARK(BM_ParsePlain10k)->Unit(benchmark::kMillisecond);

}  // namespace
