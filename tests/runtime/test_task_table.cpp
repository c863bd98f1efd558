// The coordinator's task table: moves under the state machine, counters, the cancel cascade.
#include <doctest/doctest.h>

#include "api/tasks.hpp"
#include "runtime/task_table.hpp"

using namespace chorus;
using S = TaskState;

namespace {

std::vector<TaskSpec> chain_and_diamond() {
  // 0 -> 1 -> 3, 0 -> 2 -> 3 (a diamond), and 4 on its own.
  std::vector<TaskSpec> t;
  for (const char* name : {"top", "left", "right", "bottom", "alone"}) {
    TaskSpec s = shell_task(name, "true");
    s.id = static_cast<TaskId>(t.size());
    t.push_back(s);
  }
  t[1].after = {0};
  t[2].after = {0};
  t[3].after = {1, 2};
  return t;
}

}  // namespace

TEST_CASE("Runtime.TaskTable.MovesAlongTheMachineKeepTheCounters") {
  TaskTable table;
  table.reset(chain_and_diamond());
  CHECK(table.progress().total == 5);
  REQUIRE(table.move(0, S::ready));
  REQUIRE(table.move(0, S::running));
  CHECK(table.progress().running == 1);
  CHECK(table.terminal() == 0);
  REQUIRE(table.move(0, S::succeeded));
  CHECK(table.progress().running == 0);
  CHECK(table.progress().succeeded == 1);
  CHECK(table.terminal() == 1);
  REQUIRE(table.move(4, S::cancelled));
  CHECK(table.progress().cancelled == 1);
  REQUIRE(table.move(1, S::failed));  // never started: it can never run
  CHECK(table.progress().failed == 1);
  CHECK(table.terminal() == 3);
  CHECK(!table.all_terminal());
  CHECK(table.error().ok());
}

TEST_CASE("Runtime.TaskTable.RefusesAMoveTheMachineForbids") {
  TaskTable table;
  table.reset(chain_and_diamond());
  REQUIRE(table.move(0, S::ready));
  REQUIRE(table.move(0, S::running));
  REQUIRE(table.move(0, S::succeeded));
  CHECK(!table.move(0, S::running));  // a succeeded task never runs again
  CHECK(!table.move(1, S::running));  // pending -> running skips the queue
  CHECK(!table.move(1, S::succeeded));
  // Nothing changed, and the first refusal is what the run reports.
  CHECK(table.state(0) == S::succeeded);
  CHECK(table.state(1) == S::pending);
  CHECK(table.progress().succeeded == 1);
  CHECK(table.progress().running == 0);
  CHECK(table.terminal() == 1);
  REQUIRE(!table.error().ok());
  CHECK(table.error().code() == ErrorCode::internal);
  CHECK(table.error().message() ==
        "task id 0: the coordinator tried the move succeeded -> running, which the task state "
        "machine forbids");
}

TEST_CASE("Runtime.TaskTable.ARetryOrRestartIsANewAttemptThroughTheEndedOne") {
  TaskTable table;
  table.reset(chain_and_diamond());
  REQUIRE(table.move(0, S::ready));
  REQUIRE(table.move(0, S::running));
  REQUIRE(table.move(0, S::timed_out));  // the attempt ends (journaled)...
  CHECK(table.progress().failed == 1);
  REQUIRE(table.move(0, S::ready));  // ...and the next one is queued
  CHECK(table.progress().failed == 0);
  CHECK(table.terminal() == 0);
  REQUIRE(table.move(0, S::running));
  REQUIRE(table.move(0, S::failed));
  REQUIRE(table.move(0, S::pending));  // waits (a service it uses, a back-off)
  CHECK(table.terminal() == 0);
  CHECK(table.progress().failed == 0);
  CHECK(!table.move(0, S::running));  // still through the queue
  CHECK(!table.error().ok());
}

TEST_CASE("Runtime.TaskTable.CascadeReachesEveryPendingTaskDownstreamOnce") {
  TaskTable table;
  auto specs = chain_and_diamond();
  table.reset(specs);
  TaskSpec late = shell_task("late", "true", {3});
  late.id = 5;
  REQUIRE(table.add(late) == 5);
  table.add_dependent(3, 5);
  CHECK(table.progress().total == 6);
  REQUIRE(table.move(2, S::ready));  // not pending: the walk passes it by (and what follows it)
  std::vector<TaskId> cancelled;
  table.cascade(0, [&](TaskId d) {
    cancelled.push_back(d);
    REQUIRE(table.move(d, S::cancelled));
  });
  CHECK(cancelled == std::vector<TaskId>{1, 3, 5});
  CHECK(table.progress().cancelled == 3);
  CHECK(table.state(4) == S::pending);
  std::vector<TaskId> of_top;
  table.for_each_dependent(0, [&](TaskId d) { of_top.push_back(d); });
  CHECK(of_top == std::vector<TaskId>{1, 2});
}

TEST_CASE("Runtime.TaskTable.ResumedSuccessCountsAsSkipped") {
  TaskTable table;
  table.reset(chain_and_diamond());
  table.skip_succeeded(0);
  CHECK(table.state(0) == S::succeeded);
  CHECK(table.progress().skipped == 1);
  CHECK(table.progress().succeeded == 1);
  CHECK(table.terminal() == 1);
  table.skip_succeeded(0);  // only a pending task can start out succeeded
  CHECK(!table.error().ok());
  CHECK(table.progress().skipped == 1);
}

TEST_CASE("Runtime.TaskTable.ServiceReplicasAreNotWorkLeft") {
  std::vector<TaskSpec> specs(2);
  specs[0] = shell_task("db", "serve");
  specs[0].id = 0;
  specs[0].kind = TaskKind::service;
  specs[1] = shell_task("user", "true");
  specs[1].id = 1;
  TaskTable table;
  table.reset(specs);
  CHECK(table.service_tasks() == 1);
  CHECK(table.work_left());
  REQUIRE(table.move(1, S::cancelled));
  CHECK(!table.work_left());  // only the replica is left
  CHECK(!table.all_terminal());
}
