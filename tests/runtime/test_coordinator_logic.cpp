// The coordinator's loop driven step by step: a scripted launcher (tasks end when the test says),
// the in-memory journal and a manual clock, for orders of events real processes make hard to
// produce. tests/runtime/test_coordinator.cpp and tests/integration keep the real parts.
#include <doctest/doctest.h>

#include <fstream>

#include "api/tasks.hpp"
#include "runtime/coordinator.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "support/memory_journal.hpp"
#include "support/process.hpp"
#include "support/scripted_launcher.hpp"

using namespace chorus;
using chorus::test::ManualClock;
using chorus::test::MemoryJournal;
using chorus::test::ScriptedLauncher;

namespace {

struct Logic {
  ManualClock clock;
  ScriptedLauncher launcher{clock};
  MemoryJournal journal;
  RunInfo run;
  FifoQueue queue;
  FirstFit placement;
  CancelToken cancel;
  std::vector<NodeInfo> nodes{NodeInfo{"n1", {4, 0, 0}}};
  CoordinatorOptions options;

  Logic() {
    RunInfo info;
    info.workflow_name = "logic";
    run = journal.create_run(info).value();
    options.clock = &clock;
    options.log_dir = "/nonexistent/logs";  // nothing is written: the launcher runs nothing
  }

  Result<RunSummary> go(const WorkflowGraph& g) {
    LauncherTable launchers{};
    launchers.fill(&launcher);
    Coordinator c(g, journal, run.id, nodes, queue, placement, launchers, options, &cancel);
    auto result = c.run(nullptr);
    CHECK_MESSAGE(clock.script_done(), "the run ended before the script did");
    return result;
  }

  // The journal's events of one task, as "state:attempt[:detail]".
  std::vector<std::string> history(const std::string& task) {
    std::vector<std::string> out;
    const std::vector<EventRecord> events = journal.events(run.id).value();
    for (const auto& e : events) {
      if (e.name != task) continue;
      std::string line = std::string(to_string(e.state)) + ":" + std::to_string(e.attempt);
      if (!e.detail.empty()) line += ":" + e.detail;
      out.push_back(line);
    }
    return out;
  }
};

TaskSpec task(const std::string& name, std::vector<TaskId> after = {}, int cores = 1) {
  TaskSpec t = shell_task(name, "true", std::move(after));
  t.per_rank.cores = cores;
  return t;
}

using Lines = std::vector<std::string>;

}  // namespace

TEST_CASE("Runtime.CoordinatorLogic.UpdateAfterCancelIsIgnored") {
  Logic t;
  t.launcher.cancel_ends_at_once = false;
  WorkflowGraph g;
  const TaskId a = g.add(task("a"));
  g.add(task("b", {a}));
  g.add(task("c"));
  t.clock.then([&] {
    REQUIRE(t.launcher.running("a"));
    REQUIRE(t.launcher.running("c"));
    t.cancel.request();
  });
  t.clock.then([&] {
    CHECK(t.launcher.cancels == Lines{"a", "c"});
    t.launcher.end_cancelled("a");
  });
  t.clock.then([&] {
    // a's process reports again after its cancelled end (a late exit of the same attempt).
    t.launcher.stale(a, 1, UpdateKind::exited, 0);
    t.launcher.end_cancelled("c");
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::cancelled);
  CHECK(t.history("a") == Lines{"running:1", "cancelled:1:cancelled"});
  CHECK(t.history("b") == Lines{"cancelled:0:run cancelled"});
  CHECK(s->progress.cancelled == 3);
  CHECK(s->progress.succeeded == 0);
}

TEST_CASE("Runtime.CoordinatorLogic.LaunchFailureFailsTheAttemptAndFreesTheNode") {
  Logic t;
  WorkflowGraph g;
  TaskSpec a = task("a", {}, 4);
  a.retries = 1;
  g.add(a);
  g.add(task("b", {}, 4));
  t.launcher.fail_launch("a", "agent on n1 is gone");
  t.clock.then([&] {
    // a's failed launch gave its 4 cores back: b, which queued behind it, got them.
    REQUIRE(t.launcher.running("b"));
    CHECK(t.launcher.attempts("a") == 0);
    t.launcher.exit("b");
  });
  t.clock.then([&] {
    REQUIRE(t.launcher.running("a"));
    CHECK(t.launcher.last("a").attempt == 2);
    t.launcher.exit("a");
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(t.history("a") == Lines{"running:1",
                                "failed:1:agent on n1 is gone (attempt 1 of 2, retrying)",
                                "running:2", "succeeded:2"});
}

TEST_CASE("Runtime.CoordinatorLogic.LostTaskIsRetriedThenFailsForGood") {
  Logic t;
  WorkflowGraph g;
  TaskSpec a = task("a");
  a.retries = 1;
  const TaskId ia = g.add(a);
  g.add(task("after_a", {ia}));
  t.clock.then([&] { t.launcher.lose("a"); });
  t.clock.then([&] {
    CHECK(t.launcher.last("a").attempt == 2);
    t.launcher.lose("a");
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);
  REQUIRE(s->failures.size() == 1);
  CHECK(s->failures[0].message == "lost by its launcher");
  CHECK(t.history("a") == Lines{"running:1",
                                "failed:1:lost by its launcher (attempt 1 of 2, retrying)",
                                "running:2", "failed:2:lost by its launcher"});
  CHECK(t.history("after_a") == Lines{"cancelled:0:dependency 'a' failed"});
}

TEST_CASE("Runtime.CoordinatorLogic.LostRequeuesDoNotUseRetriesUntilTheirLimit") {
  Logic t;
  t.options.lost_requeues = 2;
  WorkflowGraph g;
  TaskSpec a = task("a");
  a.retries = 1;
  g.add(a);
  // Two losses are requeued for free; then the retry, then it fails for good.
  t.clock.then([&] { t.launcher.lose("a"); });
  t.clock.then([&] { t.launcher.lose("a"); });
  t.clock.then([&] {
    CHECK(t.launcher.last("a").attempt == 3);
    t.launcher.lose("a");
  });
  t.clock.then([&] { t.launcher.exit("a", 1); });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);
  const std::string requeued =
      "lost by its launcher (lost with its node; queued again, not counted as a retry)";
  CHECK(t.history("a") == Lines{"running:1", "failed:1:" + requeued, "running:2",
                                "failed:2:" + requeued, "running:3",
                                "failed:3:lost by its launcher (attempt 3 of 4, retrying)",
                                "running:4", "failed:4:exited with status 1"});
}

TEST_CASE("Runtime.CoordinatorLogic.RetryRacingACancelIsNotLaunched") {
  Logic t;
  WorkflowGraph g;
  TaskSpec a = task("a");
  a.retries = 3;
  g.add(a);
  // The attempt fails and the run is cancelled before the coordinator looks again: the retry is
  // queued by the failure, then cancelled with the rest, never launched.
  t.clock.then([&] {
    t.launcher.exit("a", 1);
    t.cancel.request();
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::cancelled);
  CHECK(t.launcher.attempts("a") == 1);
  CHECK(t.history("a") == Lines{"running:1",
                                "failed:1:exited with status 1 (attempt 1 of 4, retrying)",
                                "cancelled:1:run cancelled"});
  CHECK(s->progress.failed == 0);
  CHECK(s->progress.cancelled == 1);
}

TEST_CASE("Runtime.CoordinatorLogic.FailureAfterACancelIsNotRetried") {
  Logic t;
  t.launcher.cancel_ends_at_once = false;
  WorkflowGraph g;
  TaskSpec a = task("a");
  a.retries = 3;
  g.add(a);
  t.clock.then([&] { t.cancel.request(); });
  t.clock.then([&] {
    CHECK(t.launcher.cancels == Lines{"a"});
    t.launcher.exit("a", 1);  // it failed on its own before the signal reached it
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::cancelled);
  CHECK(t.launcher.attempts("a") == 1);
  CHECK(t.history("a") == Lines{"running:1", "failed:1:exited with status 1"});
}

TEST_CASE("Runtime.CoordinatorLogic.ServiceRestartWaitsForItsBackoffOnTheClock") {
  Logic t;
  chorus::test::TempDir dir;
  WorkflowGraph g;
  g.workdir = dir.path();
  ServiceSpec db;
  db.name = "db";
  db.ready.kind = ProbeKind::file;
  db.ready.path = "db.ready";
  db.ready.interval = std::chrono::milliseconds(100);
  db.startup_timeout = std::chrono::minutes(10);
  db.restart.when = RestartWhen::on_failure;
  db.restart.max_restarts = 3;
  db.restart.backoff = std::chrono::seconds(10);
  const ServiceId sid = add_service(g, db, shell_task("db", "serve"));
  TaskSpec user = task("user");
  user.uses = {sid};
  g.add(user);

  TimePoint crashed{};
  t.clock.then([&] {
    REQUIRE(t.launcher.running("db"));
    CHECK(!t.launcher.running("user"));  // parked until db is up
    crashed = t.clock.now();
    t.launcher.exit("db", 1);
  });
  t.clock.then_when([&] { return t.launcher.attempts("db") == 2; },
                    [&] {
                      // Relaunched once the manual clock passed the back-off, not before.
                      CHECK(t.launcher.last("db").at - crashed >= std::chrono::seconds(10));
                      CHECK(!t.launcher.running("user"));
                      std::ofstream(dir / "db.ready") << "db-host:5432\n";
                    });
  t.clock.then_when([&] { return t.launcher.running("user"); },
                    [&] {
                      const auto& env = t.launcher.last("user").env;
                      CHECK(std::find(env.begin(), env.end(),
                                      std::pair<std::string, std::string>{
                                          "CHORUS_SERVICE_DB", "db-host:5432"}) != env.end());
                      t.launcher.exit("user");
                    });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(t.history("db") == Lines{"running:1",
                                 "failed:1:exited with status 1 (restart 1 of 3 in 10.00s)",
                                 "running:2", "running:2:ready at db-host:5432", "succeeded:2"});
  CHECK(t.launcher.cancels == Lines{"db"});  // stopped once its only user was done
}

TEST_CASE("Runtime.CoordinatorLogic.FailFastLetsRunningTasksFinishAndStartsNothing") {
  Logic t;
  t.nodes = {NodeInfo{"n1", {3, 0, 0}}};
  t.options.fail_fast = true;
  WorkflowGraph g;
  for (const char* name : {"a", "b", "c", "d", "e"}) g.add(task(name));
  t.clock.then([&] {
    REQUIRE(t.launcher.running("a"));
    REQUIRE(t.launcher.running("b"));
    REQUIRE(t.launcher.running("c"));
    t.launcher.exit("b", 2);
  });
  t.clock.then([&] {
    CHECK(t.launcher.cancels.empty());  // what runs is left to finish
    t.launcher.exit("a");
    t.launcher.exit("c");
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);
  CHECK(t.launcher.attempts("d") == 0);
  CHECK(t.launcher.attempts("e") == 0);
  CHECK(t.history("d") == Lines{"cancelled:0:not started: fail-fast after 'b' failed"});
  CHECK(s->progress.succeeded == 2);
  CHECK(s->progress.failed == 1);
  CHECK(s->progress.cancelled == 2);
}

TEST_CASE("Runtime.CoordinatorLogic.JournalFailureStopsWhatRuns") {
  Logic t;
  WorkflowGraph g;
  g.add(task("a"));
  g.add(task("b"));
  t.clock.then([&] {
    t.journal.fail_appends("the disk is full");
    t.launcher.exit("a");
  });
  auto s = t.go(g);
  REQUIRE(!s.ok());
  CHECK(s.status().message() == "journal write failed, run stopped: the disk is full");
  CHECK(t.launcher.cancels == Lines{"b"});
  CHECK(t.launcher.in_flight() == 0);
}

TEST_CASE("Runtime.CoordinatorLogic.MpiTaskSpreadOverNodesIsJournaledWithItsShares") {
  Logic t;
  t.nodes = {NodeInfo{"n1", {4, 0, 0}}, NodeInfo{"n2", {4, 0, 0}}};
  WorkflowGraph g;
  TaskSpec sim = task("sim");
  sim.kind = TaskKind::mpi;
  sim.ranks = 6;
  g.add(sim);
  t.clock.then([&] {
    CHECK(t.launcher.last("sim").spread == std::vector<NodeRanks>{{"n1", 4}, {"n2", 2}});
    t.launcher.exit("sim");
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  auto events = t.journal.events(t.run.id).value();
  REQUIRE(events.size() == 2);
  CHECK(events[0].node == "n1:4,n2:2");
  CHECK(events[0].cores == 6);
}

// A resumed run on a site that adopts what still runs (Kubernetes' Pods): the attempt that ran on
// n1 when the earlier session ended goes back to n1, before the queue's other work, so n1's
// cores are booked for the work that really holds them. Without the option the queue's order and
// the placement policy decide (x, first in line, would take n1).
TEST_CASE("Runtime.CoordinatorLogic.ResumeInPlacePutsARunningAttemptBackOnItsNode") {
  for (const bool in_place : {true, false}) {
    CAPTURE(in_place);
    Logic t;
    t.nodes = {NodeInfo{"n1", {2, 0, 0}}, NodeInfo{"n2", {2, 0, 0}}};
    t.options.resume_in_place = in_place;
    WorkflowGraph g;
    g.add(task("x", {}, 2));
    const TaskSpec& b = g.tasks[g.add(task("b", {}, 2))];
    TaskEvent was;
    was.task = b.id;
    was.name = b.name;
    was.attempt = 1;
    was.state = TaskState::running;
    was.fingerprint = spec_fingerprint(b);
    was.cores = 2;
    was.node = "n1";
    REQUIRE(t.journal.append(t.run.id, std::span<const TaskEvent>(&was, 1)).ok());
    const RunState previous = t.journal.replay(t.run.id).value();
    REQUIRE(previous.tasks.size() == 1);
    CHECK(previous.tasks[0].node == "n1");

    t.clock.then([&] {
      REQUIRE(t.launcher.running("x"));
      REQUIRE(t.launcher.running("b"));
      CHECK(t.launcher.last("b").attempt == 2);
      if (in_place) {
        CHECK(t.launcher.last("b").node == "n1");
        CHECK(t.launcher.last("x").node == "n2");
        CHECK(t.launcher.launches.front().name == "b");
      } else {
        CHECK(t.launcher.last("x").node == "n1");
        CHECK(t.launcher.last("b").node == "n2");
      }
      t.launcher.exit("x");
      t.launcher.exit("b");
    });
    LauncherTable launchers{};
    launchers.fill(&t.launcher);
    Coordinator c(g, t.journal, t.run.id, t.nodes, t.queue, t.placement, launchers, t.options,
                  &t.cancel);
    auto s = c.run(&previous);
    CHECK(t.clock.script_done());
    REQUIRE(s.ok());
    CHECK(s->status == RunStatus::succeeded);
  }
}

// A service submitted while the coordinator runs (a served instance's runs): its replicas follow
// it in order (anything else is refused), its user waits for it to be up and gets its endpoints,
// and it is not stopped as unneeded when the user ends: it runs until stop_service.
TEST_CASE("Runtime.CoordinatorLogic.ASubmittedServiceRunsUntilItIsStopped") {
  Logic t;
  chorus::test::TempDir dir;
  WorkflowGraph g;
  g.workdir = dir.path();
  g.add(task("first"));
  ServiceSpec db;
  db.name = "db";
  db.ready.kind = ProbeKind::file;
  db.ready.path = "db.ready";
  db.ready.interval = std::chrono::milliseconds(100);
  ServiceId sid = kNoService;
  TaskSubmitter* submitter = nullptr;
  bool submitted = false;
  t.options.on_turn = [&](TimePoint, TaskSubmitter& s) -> std::optional<TimePoint> {
    submitter = &s;
    if (submitted) return std::nullopt;
    submitted = true;
    TaskSpec early = shell_task("db", "serve");
    early.kind = TaskKind::service;
    early.service = 0;
    CHECK_FALSE(s.submit(early).ok());  // no such service yet
    ServiceSpec none = db;
    none.replicas = 0;
    CHECK_FALSE(s.submit_service(none).ok());
    auto id = s.submit_service(db);
    REQUIRE(id.ok());
    sid = *id;
    TaskSpec second = early;
    second.name = "db-1";
    second.service = sid;
    second.replica = 1;
    CHECK_FALSE(s.submit(second).ok());  // out of order (and past its one replica)
    early.service = sid;
    CHECK(s.submit(early).ok());
    CHECK_FALSE(s.submit(early).ok());  // its one replica is there
    TaskSpec user = task("user");
    user.uses = {sid};
    CHECK(s.submit(user).ok());
    return std::nullopt;
  };
  t.clock.then_when([&] { return t.launcher.running("db") && t.launcher.running("first"); },
                    [&] {
                      CHECK(!t.launcher.running("user"));  // parked until db is up
                      t.launcher.exit("first");
                      std::ofstream(dir / "db.ready") << "db-host:5432\n";
                    });
  t.clock.then_when([&] { return t.launcher.running("user"); }, [&] { t.launcher.exit("user"); });
  t.clock.then([&] {
    t.clock.advance(std::chrono::seconds(5));
    CHECK(t.launcher.running("db"));  // its user is done, yet it runs: stopping is the owner's
    CHECK(t.launcher.cancels.empty());
    CHECK(submitter->stop_service(sid).ok());
    CHECK(submitter->stop_service(sid).ok());  // idempotent
    CHECK_FALSE(submitter->stop_service(sid + 1).ok());
  });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::succeeded);
  CHECK(t.launcher.cancels == Lines{"db"});
  CHECK(t.history("db") == Lines{"running:1", "running:1:ready at db-host:5432", "succeeded:1"});
}

TEST_CASE("Runtime.CoordinatorLogic.AForgottenTaskIsGoneByIdAndItsNameIsFree") {
  Logic t;
  t.launcher.cancel_ends_at_once = false;  // d's end comes later, after it is forgotten
  WorkflowGraph g;
  g.add(task("first"));
  TaskSubmitter* sub = nullptr;
  TaskId a = kNoTask, b = kNoTask, c = kNoTask, d = kNoTask;
  t.options.on_turn = [&](TimePoint, TaskSubmitter& s) -> std::optional<TimePoint> {
    if (sub != nullptr) return std::nullopt;
    sub = &s;
    a = s.submit(task("a")).value();
    b = s.submit(task("b", {a})).value();
    c = s.submit(task("c", {b})).value();
    d = s.submit(task("d")).value();
    return std::nullopt;
  };
  t.clock.then_when([&] { return t.launcher.running("a") && t.launcher.running("d"); },
                    [&] {
                      CHECK_FALSE(sub->forget(0).ok());  // the graph's own
                      CHECK_FALSE(sub->forget(a).ok());  // running
                      t.launcher.exit("a");
                    });
  t.clock.then_when(
      [&] { return t.launcher.running("b"); },
      [&] {
        CHECK(sub->cancel(c, "not wanted").ok());
        CHECK_FALSE(sub->forget(c).ok());  // ended, but b, which it waited for, runs
        CHECK(sub->drop(d, "round closed").ok());
        CHECK(sub->forget(d).ok());  // its process still runs: its end must be ignored
        CHECK(sub->forget(a).ok());
        CHECK_FALSE(sub->forget(a).ok());
        CHECK(sub->task_name(a).empty());
        CHECK_FALSE(sub->cancel(a, "again").ok());
        CHECK_FALSE(sub->release(a).ok());
        CHECK_FALSE(sub->drop(a, "again").ok());
        CHECK_FALSE(sub->dropped(d));
        TaskSpec after_a = task("after-a", {a});
        CHECK_FALSE(sub->submit(after_a).ok());  // a is no dependency any more
      });
  t.clock.then([&] {
    t.launcher.end_cancelled("d");  // late: its spec is gone
    t.launcher.exit("b");
  });
  t.clock.then_when([&] { return !t.launcher.running("b"); },
                    [&] {
                      CHECK(sub->forget(c).ok());
                      CHECK(sub->forget(b).ok());
                      auto again = sub->submit(task("a"));  // the name is free again
                      REQUIRE(again.ok());
                      CHECK(*again != a);
                    });
  t.clock.then_when([&] { return t.launcher.attempts("a") == 2; },
                    [&] {
                      t.launcher.exit("a");
                      t.launcher.exit("first");
                    });
  auto s = t.go(g);
  REQUIRE(s.ok());
  CHECK(s->status == RunStatus::failed);  // c was cancelled (not dropped)
  CHECK(t.history("a") == Lines{"running:1", "succeeded:1", "running:1", "succeeded:1"});
  CHECK(t.history("d") == Lines{"running:1", "cancelled:1:dropped by quorum: round closed"});
  CHECK(t.launcher.cancels == Lines{"d"});
}
