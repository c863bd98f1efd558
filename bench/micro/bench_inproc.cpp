// No-op function tasks through the InprocLauncher alone (no coordinator, no journal): what the
// in-process path can carry at most. Reports tasks/s.
//
//   ./build/bench/chorus_micro_bench --benchmark_filter=Inproc
//
// Batch: launch N tasks, then poll until all are back. Window: keep at most W in flight, polling
// whenever the window is full, as the coordinator does with max_in_flight_per_launcher.
#include <benchmark/benchmark.h>
#include <poll.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/inproc/inproc_launcher.hpp"

namespace {

using chorus::InprocLauncher;
using chorus::LaunchRequest;
using chorus::StateUpdate;
using chorus::Status;
using chorus::TaskId;
using chorus::TaskKind;
using chorus::TaskSpec;

std::vector<TaskSpec> noop_specs(std::int64_t n) {
  std::vector<TaskSpec> specs(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    specs[i].id = static_cast<TaskId>(i);
    specs[i].kind = TaskKind::function;
    specs[i].fn = [] { return Status::ok_status(); };
  }
  return specs;
}

void wait_and_poll(InprocLauncher& launcher, std::vector<StateUpdate>& updates) {
  pollfd pfd{launcher.wait_fd(), POLLIN, 0};
  ::poll(&pfd, 1, 100);
  launcher.poll(updates);
}

bool all_succeeded(const std::vector<StateUpdate>& updates, std::size_t expected) {
  if (updates.size() != expected) return false;
  for (const StateUpdate& u : updates) {
    if (!u.succeeded()) return false;
  }
  return true;
}

void BM_InprocNoopBatch(benchmark::State& state) {
  const std::int64_t tasks = state.range(0);
  std::vector<TaskSpec> specs = noop_specs(tasks);
  InprocLauncher launcher(static_cast<unsigned>(state.range(1)));
  std::vector<StateUpdate> updates;
  updates.reserve(specs.size());
  LaunchRequest request;
  for (auto _ : state) {
    updates.clear();
    for (const TaskSpec& spec : specs) {
      request.spec = &spec;
      if (!launcher.launch(request).ok()) {
        state.SkipWithError("launch failed");
        return;
      }
    }
    while (launcher.in_flight() > 0) wait_and_poll(launcher, updates);
    if (!all_succeeded(updates, specs.size())) {
      state.SkipWithError("not every task was reported exactly once as succeeded");
      return;
    }
  }
  state.counters["tasks_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * tasks), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InprocNoopBatch)
    ->ArgNames({"tasks", "threads"})
    ->Args({100000, 1})
    ->Args({100000, 2})
    ->Args({1000000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_InprocNoopWindow(benchmark::State& state) {
  const std::int64_t tasks = state.range(0);
  const auto window = static_cast<std::size_t>(state.range(1));
  std::vector<TaskSpec> specs = noop_specs(tasks);
  InprocLauncher launcher(2);
  std::vector<StateUpdate> updates;
  updates.reserve(specs.size());
  LaunchRequest request;
  for (auto _ : state) {
    updates.clear();
    for (const TaskSpec& spec : specs) {
      while (launcher.in_flight() >= window) wait_and_poll(launcher, updates);
      request.spec = &spec;
      if (!launcher.launch(request).ok()) {
        state.SkipWithError("launch failed");
        return;
      }
    }
    while (launcher.in_flight() > 0) wait_and_poll(launcher, updates);
    if (!all_succeeded(updates, specs.size())) {
      state.SkipWithError("not every task was reported exactly once as succeeded");
      return;
    }
  }
  state.counters["tasks_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * tasks), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InprocNoopWindow)
    ->ArgNames({"tasks", "window"})
    ->Args({100000, 64})
    ->Args({100000, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
