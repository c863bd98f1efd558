// ServedJournal: the records of a served instance's one coordinator land in each task's own run,
// under the task's id and name there.
#include <doctest/doctest.h>

#include "runtime/served_journal.hpp"
#include "tests/support/memory_journal.hpp"

namespace chorus {

TEST_CASE("ServedJournal.GivesEachRecordToItsTasksRun") {
  test::MemoryJournal inner;
  auto make = [&](const char* name) {
    RunInfo info;
    info.workflow_name = name;
    return *inner.create_run(std::move(info));
  };
  const RunInfo a = make("wa");
  const RunInfo b = make("wb");
  ServedJournal journal(inner);
  journal.add_route(0, a.id, 0, "x");
  journal.add_route(1, b.id, 0, "y");
  journal.add_route(2, a.id, 1, "z");
  std::vector<TaskEvent> events(3);
  for (TaskId i = 0; i < 3; ++i) {
    events[i].task = i;
    events[i].name = "instance-wide";
    events[i].attempt = 1;
    events[i].state = TaskState::running;
  }
  std::vector<TaskGroup> groups{{2, 1, 4242, 7}};
  REQUIRE(journal.append("serve", events, groups).ok());
  auto ra = inner.replay(a.id);
  auto rb = inner.replay(b.id);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  REQUIRE(ra->tasks.size() == 2);
  CHECK(ra->tasks[0].name == "x");
  CHECK(ra->tasks[1].name == "z");
  CHECK(ra->tasks[1].task == 1);
  REQUIRE(rb->tasks.size() == 1);
  CHECK(rb->tasks[0].name == "y");
  CHECK(rb->tasks[0].task == 0);
  auto ga = inner.task_groups(a.id);
  REQUIRE(ga.ok());
  REQUIRE(ga->size() == 1);
  CHECK((*ga)[0].task == 1);
  CHECK((*ga)[0].pgid == 4242);
}

TEST_CASE("ServedJournal.RefusesAnEventOfATaskWithoutARun") {
  test::MemoryJournal inner;
  ServedJournal journal(inner);
  TaskEvent e;
  e.task = 5;
  e.name = "lost";
  CHECK_FALSE(journal.append("serve", std::span<const TaskEvent>(&e, 1)).ok());
}

}  // namespace chorus
