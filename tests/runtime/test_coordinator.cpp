// The coordinator over real parts: the SQLite journal, the in-process pool, FIFO and first-fit.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "adapters/inproc/inproc_launcher.hpp"
#include "api/tasks.hpp"
#include "runtime/coordinator.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::TempDir;

namespace {

struct Harness {
  TempDir dir;
  std::unique_ptr<StateStore> store;
  RunInfo run;
  InprocLauncher pool{2};
  FifoQueue queue;
  FirstFit placement;
  NodeInfo node{"n1", {2, 0, 0}};

  Harness() {
    store = std::move(open_sqlite_store(dir / "chorus.db").value());
    RunInfo info;
    info.workflow_name = "t";
    run = store->create_run(info).value();
  }

  Result<RunSummary> run_graph(const WorkflowGraph& g, const RunState* previous = nullptr,
                               CancelToken* cancel = nullptr, bool fail_fast = false) {
    LauncherTable launchers{};
    launchers[static_cast<std::size_t>(TaskKind::function)] = &pool;
    CoordinatorOptions options;
    options.log_dir = dir.path();
    options.fail_fast = fail_fast;
    Coordinator c(g, *store, run.id, {node}, queue, placement, launchers, options, cancel);
    return c.run(previous);
  }
};

struct Recorder {
  std::mutex mu;
  std::vector<std::string> order;
  TaskFunction make(std::string name, bool ok = true) {
    return [this, name, ok]() -> Status {
      std::lock_guard lock(mu);
      order.push_back(name);
      return ok ? Status{} : invalid_argument(name + " broke");
    };
  }
  std::size_t pos(const std::string& name) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), name) - order.begin());
  }
};

const TaskRecord& record(const RunState& state, const std::string& name) {
  for (const auto& t : state.tasks) {
    if (t.name == name) return t;
  }
  FAIL("no record for " << name);
  static TaskRecord none;
  return none;
}

}  // namespace

TEST_CASE("Runtime.Coordinator.RunsDagInDependencyOrder") {
  Harness h;
  Recorder rec;
  WorkflowGraph g;
  auto a = g.add(function_task("a", rec.make("a")));
  auto b = g.add(function_task("b", rec.make("b"), {a}));
  auto c = g.add(function_task("c", rec.make("c"), {a}));
  g.add(function_task("d", rec.make("d"), {b, c}));
  auto s = h.run_graph(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(s->progress.succeeded == 4);
  REQUIRE(rec.order.size() == 4);
  CHECK(rec.pos("a") < rec.pos("b"));
  CHECK(rec.pos("a") < rec.pos("c"));
  CHECK(rec.pos("b") < rec.pos("d"));
  CHECK(rec.pos("c") < rec.pos("d"));
  // Journal: every task has running then succeeded, running first.
  auto events = h.store->events(h.run.id).value();
  CHECK(events.size() == 8);
  auto replay = h.store->replay(h.run.id).value();
  for (const auto& t : replay.tasks) CHECK(t.state == TaskState::succeeded);
}

TEST_CASE("Runtime.Coordinator.RetriesThenFailsAndCancelsDependents") {
  Harness h;
  std::atomic<int> calls{0};
  WorkflowGraph g;
  auto flaky = function_task("flaky", [&]() -> Status {
    ++calls;
    return invalid_argument("nope");
  });
  flaky.retries = 2;
  auto f = g.add(std::move(flaky));
  auto d1 = g.add(function_task("d1", [] {}, {f}));
  g.add(function_task("d2", [] {}, {d1}));
  g.add(function_task("independent", [] {}));
  auto s = h.run_graph(g);
  REQUIRE(s.ok());
  CHECK(calls == 3);
  CHECK(s->status == RunStatus::failed);
  CHECK(s->progress.failed == 1);
  CHECK(s->progress.cancelled == 2);
  CHECK(s->progress.succeeded == 1);
  REQUIRE(s->failures.size() == 1);
  CHECK(s->failures[0].message == "nope");
  auto replay = h.store->replay(h.run.id).value();
  CHECK(record(replay, "flaky").attempt == 3);
  CHECK(record(replay, "flaky").state == TaskState::failed);
  CHECK(record(replay, "d1").detail.find("dependency 'flaky' failed") != std::string::npos);
  CHECK(record(replay, "d2").state == TaskState::cancelled);
}

TEST_CASE("Runtime.Coordinator.ResumeSkipsTasksThatSucceededWithSameSpec") {
  Harness h;
  std::atomic<int> a_calls{0}, b_calls{0};
  bool b_ok = false;
  WorkflowGraph g;
  auto a = g.add(function_task("a", [&] { ++a_calls; }));
  g.add(function_task("b",
                      [&]() -> Status {
                        ++b_calls;
                        return b_ok ? Status{} : invalid_argument("not yet");
                      },
                      {a}));
  auto first = h.run_graph(g);
  REQUIRE(first.ok());
  CHECK(first->status == RunStatus::failed);
  b_ok = true;
  auto previous = h.store->replay(h.run.id).value();
  FifoQueue fresh_queue;
  LauncherTable launchers{};
  launchers[static_cast<std::size_t>(TaskKind::function)] = &h.pool;
  CoordinatorOptions options;
  options.log_dir = h.dir.path();
  Coordinator again(g, *h.store, h.run.id, {h.node}, fresh_queue, h.placement, launchers, options);
  auto second = again.run(&previous);
  REQUIRE(second.ok());
  CHECK(second->status == RunStatus::succeeded);
  CHECK(second->progress.skipped == 1);
  CHECK(a_calls == 1);
  CHECK(b_calls == 2);
  CHECK(record(h.store->replay(h.run.id).value(), "b").attempt == 2);
}

TEST_CASE("Runtime.Coordinator.TaskThatCanNeverFitIsRejectedAtOnce") {
  Harness h;
  WorkflowGraph g;
  auto big = function_task("big", [] {});
  big.per_rank.cores = 64;
  g.add(std::move(big));
  g.add(function_task("small", [] {}));
  auto s = h.run_graph(g);
  REQUIRE(s.ok());
  CHECK(s->progress.failed == 1);
  CHECK(s->progress.succeeded == 1);
  REQUIRE(s->failures.size() == 1);
  CHECK(s->failures[0].message.find("can never run here: needs 64 cores") != std::string::npos);
}

TEST_CASE("Runtime.Coordinator.NeverMoreCoresBusyThanTheNodeHas") {
  Harness h;
  std::atomic<int> busy{0}, peak{0};
  WorkflowGraph g;
  for (int i = 0; i < 40; ++i) {
    auto t = function_task("t" + std::to_string(i), [&] {
      int now = ++busy;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      --busy;
    });
    t.per_rank.cores = 1;  // counted against the node's 2 cores
    g.add(std::move(t));
  }
  auto s = h.run_graph(g);
  REQUIRE(s.ok());
  CHECK(s->progress.succeeded == 40);
  CHECK(peak.load() <= 2);
  CHECK(peak.load() >= 1);
}

TEST_CASE("Runtime.Coordinator.FailFastStartsNothingNew") {
  Harness h;
  std::atomic<int> ran{0};
  WorkflowGraph g;
  auto bad = function_task("bad", []() -> Status { return invalid_argument("x"); });
  bad.per_rank.cores = 2;  // alone on the node: nothing else starts beside it
  g.add(std::move(bad));
  for (int i = 0; i < 10; ++i) {
    auto t = function_task("t" + std::to_string(i), [&] { ++ran; });
    t.per_rank.cores = 2;
    g.add(std::move(t));
  }
  auto s = h.run_graph(g, nullptr, nullptr, /*fail_fast=*/true);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);
  CHECK(ran == 0);
  CHECK(s->progress.cancelled == 10);
}

TEST_CASE("Runtime.Coordinator.CancelTokenCancelsWhatHasNotRun") {
  Harness h;
  CancelToken cancel;
  std::atomic<int> ran{0};
  WorkflowGraph g;
  auto first = function_task("first", [&] {
    ++ran;
    cancel.request();
  });
  first.per_rank.cores = 2;
  auto f = g.add(std::move(first));
  for (int i = 0; i < 5; ++i)
    g.add(function_task("after" + std::to_string(i), [&] { ++ran; }, {f}));
  auto s = h.run_graph(g, nullptr, &cancel);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::cancelled);
  CHECK(ran == 1);
  // 'first' asked for the cancel while running: it is reported succeeded or, when the coordinator
  // saw the request before its completion, cancelled (it ran to the end either way).
  CHECK(s->progress.succeeded + s->progress.cancelled == 6);
  CHECK(s->progress.cancelled >= 5);
}

namespace {

// A workflow that grows from its results: round k submits round k+1 until round 5; round 3 fails
// while `fail_round_3` is set.
struct Rounds {
  std::atomic<int> runs[6] = {};
  bool fail_round_3 = true;

  TaskSpec round(int k) {
    return function_task("round-" + std::to_string(k), [this, k]() -> Status {
      ++runs[k];
      if (k == 3 && fail_round_3) return invalid_argument("diverged");
      return {};
    });
  }

  TaskDoneHandler handler() {
    return [this](const TaskSpec& task, TaskState outcome, TaskSubmitter& submitter) {
      if (outcome != TaskState::succeeded) return;
      int k = std::stoi(task.name.substr(6));
      if (k < 5) {
        TaskSpec next = round(k + 1);
        next.after = {task.id};
        REQUIRE(submitter.submit(std::move(next)).ok());
      }
    };
  }
};

}  // namespace

TEST_CASE("Runtime.Coordinator.CompletionHandlersGrowTheWorkflowAndResumeRegrowsIt") {
  Harness h;
  Rounds rounds;
  WorkflowGraph g;
  g.add(rounds.round(0));
  LauncherTable launchers{};
  launchers[static_cast<std::size_t>(TaskKind::function)] = &h.pool;
  CoordinatorOptions options;
  options.log_dir = h.dir.path();
  options.on_task_done = rounds.handler();
  {
    FifoQueue queue;
    Coordinator c(g, *h.store, h.run.id, {h.node}, queue, h.placement, launchers, options);
    auto s = c.run(nullptr);
    REQUIRE(s.ok());
    CHECK(s->status == RunStatus::failed);
    CHECK(s->progress.total == 4);  // rounds 0-3 were submitted; round 3 failed
    CHECK(s->progress.succeeded == 3);
  }
  rounds.fail_round_3 = false;
  auto previous = h.store->replay(h.run.id).value();
  FifoQueue queue;
  Coordinator again(g, *h.store, h.run.id, {h.node}, queue, h.placement, launchers, options);
  auto s = again.run(&previous);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(s->progress.total == 6);
  CHECK(s->progress.skipped == 3);  // rounds 0-2 regrown from the handler, not rerun
  for (int k = 0; k < 3; ++k) CHECK(rounds.runs[k] == 1);
  CHECK(rounds.runs[3] == 2);
  CHECK(rounds.runs[4] == 1);
  CHECK(rounds.runs[5] == 1);
}

TEST_CASE("Runtime.Coordinator.SubmitRejectsDuplicatesAndUnknownDependencies") {
  Harness h;
  std::vector<Status> errors;
  WorkflowGraph g;
  g.add(function_task("seed", [] {}));
  LauncherTable launchers{};
  launchers[static_cast<std::size_t>(TaskKind::function)] = &h.pool;
  CoordinatorOptions options;
  options.log_dir = h.dir.path();
  options.on_task_done = [&](const TaskSpec& t, TaskState, TaskSubmitter& submitter) {
    if (t.name != "seed") return;
    errors.push_back(submitter.submit(function_task("seed", [] {})).status());
    auto bad = function_task("orphan", [] {});
    bad.after = {999};
    errors.push_back(submitter.submit(std::move(bad)).status());
    auto exe = command_task("exe", {"/bin/true"});  // no executable launcher in this run
    errors.push_back(submitter.submit(std::move(exe)).status());
  };
  FifoQueue queue;
  Coordinator c(g, *h.store, h.run.id, {h.node}, queue, h.placement, launchers, options);
  auto s = c.run(nullptr);
  REQUIRE(s.ok());
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].message().find("already exists") != std::string::npos);
  CHECK(errors[1].message().find("unknown task id 999") != std::string::npos);
  CHECK(errors[2].message().find("cannot launch") != std::string::npos);
  CHECK(s->progress.total == 1);
}
