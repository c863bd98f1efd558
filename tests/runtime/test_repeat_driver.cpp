// Repeat groups through the coordinator: rounds submitted while the run goes on, the gate released
// when `until` says so, failures and resume (rounds regrown, finished ones not rerun).
#include <doctest/doctest.h>

#include <map>
#include <mutex>

#include "adapters/inproc/inproc_launcher.hpp"
#include "api/tasks.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/repeat_driver.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::TempDir;

namespace {

// A group "learn" whose rounds are two function tasks, "sim[round=R]" -> "fit[round=R]"; fit
// records a value per round, and until(R) says done once that value reached `target`.
struct Loop {
  std::mutex mu;
  std::map<std::string, int> runs;  // task name -> times its body ran
  std::map<int, int> value;         // round -> what fit wrote
  int target = 3;
  int fail_round = 0;  // fit of this round fails (0 = none)
  std::string until_error;

  TaskSpec task(const std::string& base, int round) {
    std::string name = base + "[round=" + std::to_string(round) + "]";
    return function_task(name, TaskFunction([this, name, base, round]() -> Status {
                           std::lock_guard lock(mu);
                           ++runs[name];
                           if (base == "fit") {
                             if (round == fail_round) return invalid_argument("fit diverged");
                             value[round] = round;
                           }
                           return {};
                         }));
  }

  WorkflowGraph graph(int max_rounds) {
    WorkflowGraph g;
    g.name = "loop";
    TaskId sim = g.add(task("sim", 1));
    auto fit = task("fit", 1);
    fit.after = {sim};
    TaskId fit_id = g.add(fit);
    auto gate = function_task("learn", [] {});
    gate.held = true;
    gate.after = {sim, fit_id};
    RepeatGroup group;
    group.name = "learn";
    group.gate = g.add(gate);
    group.max_rounds = max_rounds;
    group.first_round = {sim, fit_id};
    group.expand = [this](int round) -> Result<RoundPlan> {
      RoundPlan plan;
      plan.tasks = {task("fit", round), task("sim", round)};  // out of order on purpose
      plan.local_after = {{1}, {}};
      return plan;
    };
    group.until = [this](int round) -> Result<bool> {
      std::lock_guard lock(mu);
      if (!until_error.empty()) return invalid_argument(until_error);
      return value.at(round) >= target;
    };
    g.repeats.push_back(group);
    auto after = function_task("report", [] {});
    after.after = {group.gate};
    g.add(after);
    return g;
  }
};

struct Harness {
  TempDir dir;
  std::unique_ptr<StateStore> store;
  RunInfo run;
  InprocLauncher pool{2};
  FirstFit placement;

  Harness() {
    store = std::move(open_sqlite_store(dir / "chorus.db").value());
    RunInfo info;
    info.workflow_name = "loop";
    run = store->create_run(info).value();
  }

  Result<RunSummary> go(const WorkflowGraph& g, const RunState* previous = nullptr) {
    LauncherTable launchers{};
    launchers[static_cast<std::size_t>(TaskKind::function)] = &pool;
    RepeatDriver driver(g);
    CoordinatorOptions options;
    options.log_dir = dir.path();
    options.on_task_done = [&driver](const TaskSpec& t, TaskState s, TaskSubmitter& sub) {
      driver.on_task_done(t, s, sub);
    };
    FifoQueue queue;
    Coordinator c(g, *store, run.id, {NodeInfo{"n1", {2, 0, 0}}}, queue, placement, launchers,
                  options);
    return c.run(previous);
  }
};

}  // namespace

TEST_CASE("Runtime.Repeat.RunsRoundsUntilTheConditionHoldsThenReleasesTheGate") {
  Harness h;
  Loop loop;
  auto g = loop.graph(10);
  auto s = h.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(s->progress.total == 3 * 2 + 2);  // rounds 1-3, gate, report
  CHECK(loop.runs["fit[round=3]"] == 1);
  CHECK(loop.runs.count("fit[round=4]") == 0);
  auto events = h.store->events(h.run.id).value();
  double last_fit = 0, report = 0;
  for (const auto& e : events) {
    if (e.name == "fit[round=3]" && e.state == TaskState::succeeded) last_fit = e.time;
    if (e.name == "report" && e.state == TaskState::running) report = e.time;
  }
  CHECK(report >= last_fit);
}

TEST_CASE("Runtime.Repeat.StopsAtMaxRounds") {
  Harness h;
  Loop loop;
  loop.target = 100;
  auto g = loop.graph(2);
  auto s = h.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(s->progress.total == 2 * 2 + 2);
}

TEST_CASE("Runtime.Repeat.AFailedRoundFailsTheGroupAndWhatFollowsIt") {
  Harness h;
  Loop loop;
  loop.fail_round = 2;
  auto g = loop.graph(10);
  auto s = h.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);
  CHECK(loop.runs.count("sim[round=3]") == 0);
  auto state = h.store->replay(h.run.id).value();
  for (const auto& t : state.tasks) {
    if (t.name == "learn" || t.name == "report") CHECK(t.state == TaskState::cancelled);
  }
}

TEST_CASE("Runtime.Repeat.AnUntilErrorFailsTheGateWithItsMessage") {
  Harness h;
  Loop loop;
  loop.until_error = "round-1/metrics.json: no such file";
  auto g = loop.graph(10);
  auto s = h.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);
  REQUIRE(s->failures.size() == 1);
  CHECK(s->failures[0].name == "learn");
  CHECK(s->failures[0].message ==
        "repeat group 'learn', round 1: round-1/metrics.json: no such file");
}

TEST_CASE("Runtime.Repeat.ResumeContinuesAtTheRoundThatDidNotFinish") {
  Harness h;
  Loop loop;
  loop.target = 4;
  loop.fail_round = 3;
  auto g = loop.graph(10);
  REQUIRE(h.go(g).ok());
  loop.fail_round = 0;
  auto previous = h.store->replay(h.run.id).value();
  auto s = h.go(g, &previous);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(loop.runs["sim[round=1]"] == 1);
  CHECK(loop.runs["fit[round=2]"] == 1);
  CHECK(loop.runs["sim[round=3]"] == 1);  // succeeded in the first session
  CHECK(loop.runs["fit[round=3]"] == 2);  // failed, then rerun
  CHECK(loop.runs["fit[round=4]"] == 1);
  CHECK(loop.runs.count("sim[round=5]") == 0);
}
