// The SQLite run journal: append throughput by batch size, and replay of large runs.
//
//   ./build/bench/chorus_micro_bench --benchmark_filter=Journal
//
// Files go to a fresh directory under $TMPDIR (put it on the file system the journal will live on:
// a network file system is much slower than a local disk).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runtime/store/state_store.hpp"

namespace {

namespace fs = std::filesystem;
using chorus::StateStore;
using chorus::TaskEvent;
using chorus::TaskState;

class BenchDir {
 public:
  BenchDir() {
    std::string pattern = (fs::temp_directory_path() / "chorus-bench-journal-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~BenchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  std::string journal() const { return (path_ / "journal.db").string(); }

 private:
  fs::path path_;
};

struct Journal {
  BenchDir dir;
  std::unique_ptr<StateStore> store;
  std::string run;
  std::string error;
};

// Opens a fresh journal holding one run of `tasks` tasks; `error` is set on failure.
void open_journal(Journal& j, std::int64_t tasks) {
  if (!j.dir.ok()) {
    j.error = "cannot create a temporary directory";
    return;
  }
  auto store = chorus::open_sqlite_store(j.dir.journal());
  if (!store.ok()) {
    j.error = store.status().message();
    return;
  }
  j.store = std::move(*store);
  chorus::RunInfo info;
  info.workflow_name = "bench";
  info.workdir = "/tmp";
  info.total_tasks = tasks;
  auto run = j.store->create_run(info);
  if (!run.ok()) {
    j.error = run.status().message();
    return;
  }
  j.run = run->id;
}

const std::vector<std::string>& task_names(std::size_t n) {
  static std::vector<std::string> names;
  while (names.size() < n) names.push_back("task_" + std::to_string(names.size()));
  return names;
}

// Fills `batch` with the events of tasks [first, first + batch.size()) in `state`.
void fill(std::vector<TaskEvent>& batch, std::size_t first, TaskState state, double time) {
  const auto& names = task_names(first + batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    TaskEvent& e = batch[i];
    e.task = static_cast<chorus::TaskId>(first + i);
    e.name = names[first + i];
    e.attempt = 1;
    e.state = state;
    e.time = time;
    e.exit_code = 0;
    e.fingerprint = 0x9e3779b97f4a7c15ULL * (first + i + 1);
  }
}

// One append() of state.range(0) events per iteration: the coordinator journals one batch per
// scheduling round, so this is the cost of one round's durability.
void BM_JournalAppend(benchmark::State& state) {
  const auto batch_size = static_cast<std::size_t>(state.range(0));
  Journal j;
  open_journal(j, 0);
  if (!j.error.empty()) {
    state.SkipWithError(j.error.c_str());
    return;
  }
  // The same events every round: their content does not change the cost (no unique keys).
  std::vector<TaskEvent> batch(batch_size);
  fill(batch, 0, TaskState::running, 1.0);
  for (auto _ : state) {
    if (auto s = j.store->append(j.run, batch); !s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch_size));
  state.SetLabel("events/s = items_per_second");
}
BENCHMARK(BM_JournalAppend)->Arg(1)->Arg(100)->Arg(1000)->UseRealTime();

// 2,000,000 events in batches of 1,000 into one file: checks appends stay fast as the file grows.
void BM_JournalAppendTwoMillion(benchmark::State& state) {
  constexpr std::size_t kBatch = 1000;
  constexpr std::size_t kEvents = 2'000'000;
  for (auto _ : state) {
    state.PauseTiming();
    auto owner = std::make_unique<Journal>();
    Journal& j = *owner;
    open_journal(j, kEvents / 2);
    if (!j.error.empty()) {
      state.SkipWithError(j.error.c_str());
      return;
    }
    std::vector<TaskEvent> batch(kBatch);
    task_names(kEvents / 2);
    state.ResumeTiming();
    for (std::size_t done = 0; done < kEvents; done += kBatch) {
      const std::size_t task = done % (kEvents / 2);
      fill(batch, task, done < kEvents / 2 ? TaskState::running : TaskState::succeeded, 1.0);
      if (auto s = j.store->append(j.run, batch); !s.ok()) {
        state.SkipWithError(s.message().c_str());
        return;
      }
    }
    state.PauseTiming();  // removing the files is not part of the figure
    owner.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kEvents));
}
BENCHMARK(BM_JournalAppendTwoMillion)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// replay() of a run with state.range(0) tasks, each with a running and a succeeded event, next to
// another run of the same size (replay must not read it).
void BM_JournalReplay(benchmark::State& state) {
  const auto tasks = static_cast<std::size_t>(state.range(0));
  Journal j;
  open_journal(j, static_cast<std::int64_t>(tasks));
  if (!j.error.empty()) {
    state.SkipWithError(j.error.c_str());
    return;
  }
  chorus::RunInfo other_info;
  other_info.workflow_name = "other";
  auto other = j.store->create_run(other_info);
  if (!other.ok()) {
    state.SkipWithError(other.status().message().c_str());
    return;
  }
  constexpr std::size_t kBatch = 10'000;
  std::vector<TaskEvent> batch;
  for (TaskState s : {TaskState::running, TaskState::succeeded}) {
    for (std::size_t first = 0; first < tasks; first += kBatch) {
      batch.resize(std::min(kBatch, tasks - first));
      fill(batch, first, s, s == TaskState::running ? 1.0 : 2.0);
      for (const std::string* run : {&j.run, &other->id}) {
        if (auto st = j.store->append(*run, batch); !st.ok()) {
          state.SkipWithError(st.message().c_str());
          return;
        }
      }
    }
  }
  for (auto _ : state) {
    auto replayed = j.store->replay(j.run);
    if (!replayed.ok() || replayed->tasks.size() != tasks) {
      state.SkipWithError(replayed.ok() ? "wrong task count" : replayed.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(replayed->tasks.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * tasks * 2));
  state.SetLabel("items = events");
}
BENCHMARK(BM_JournalReplay)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_JournalReplay)
    ->Arg(1'000'000)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
