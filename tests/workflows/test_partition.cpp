// `job:` and `partition: {work, target}` on tasks: what the reader builds, and its located errors.
#include <doctest/doctest.h>

#include <string>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::parse;

namespace {

std::string env_of(const TaskSpec& t, const std::string& key) {
  for (const auto& [k, v] : t.env) {
    if (k == key) return v;
  }
  return {};
}

}  // namespace

TEST_CASE("Workflows.Partition.JobKeySetsTheTasksJob") {
  // Without `job:`, an entry is its job: a sweep's members share it.
  auto g = parse(R"Y(tasks:
  - {name: a, command: [x], job: etl}
  - {name: b, command: [x]}
  - {name: c, command: [x, "{i}"], foreach: {i: "range(0, 3)"}}
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  REQUIRE(g->tasks.size() == 5);
  CHECK(g->tasks[0].job == "etl");
  CHECK(g->tasks[1].job == "b");
  for (std::size_t k = 2; k < 5; ++k) CHECK(g->tasks[k].job == "c");
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: ''}\n"),
                 "wf.yaml:2:34: 'job' in task 'a' must not be empty"));
}

TEST_CASE("Workflows.Partition.SplitsATaskIntoPiecesOfAboutTheTarget") {
  auto g = parse(R"Y(tasks:
  - name: scan
    command: [scan, --part, "{part}"]
    partition: {work: 2s, target: 0.5s}
  - {name: sum, command: [sum], after: [scan]}
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  REQUIRE(g->tasks.size() == 5);
  for (int k = 0; k < 4; ++k) {
    const TaskSpec& t = g->tasks[static_cast<std::size_t>(k)];
    CAPTURE(t.name);
    CHECK(t.name == "scan[part=" + std::to_string(k) + "]");
    CHECK(t.cmd.argv.back() == std::to_string(k));
    CHECK(t.estimate == std::chrono::milliseconds(500));
    CHECK(t.job == "scan");  // the pieces are one job for uwfq
    CHECK(env_of(t, "CHORUS_PARTS") == "4");
  }
  CHECK(g->tasks[4].after.size() == 4);  // waits for every piece
}

TEST_CASE("Workflows.Partition.CombinesWithForeachAndKeepsAnExplicitJob") {
  auto g = parse(R"Y(tasks:
  - name: t
    command: [run, "{x}", "{part}"]
    foreach: {x: [a, b]}
    job: sweep1
    partition: {work: 1.1s, target: 0.5s}
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  REQUIRE(g->tasks.size() == 6);  // 2 members x ceil(1.1 / 0.5) = 3 pieces
  CHECK(g->tasks[0].name == "t[x=a,part=0]");
  CHECK(g->tasks[5].name == "t[x=b,part=2]");
  CHECK(g->tasks[0].job == "sweep1");
  CHECK(std::chrono::duration<double>(g->tasks[0].estimate).count() == doctest::Approx(1.1 / 3));
}

TEST_CASE("Workflows.Partition.BadPartitionsAreLocatedErrors") {
  CHECK(contains(
      error_of("tasks:\n  - {name: a, command: [x], partition: {work: -1s, target: 1s}}\n"),
      "wf.yaml:2:"));
  CHECK(
      contains(error_of("tasks:\n  - {name: a, command: [x], partition: {work: 0s, target: 1s}}\n"),
               "'partition.work' in task 'a' must be a positive duration"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], partition: {work: 10s}}\n"),
                 "wf.yaml:2:40: 'partition' in task 'a' needs 'target'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], partition: {work: 1s, target: 1s, "
                          "size: 2}}\n"),
                 "unknown key 'size'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], partition: 5}\n"),
                 "'partition' in task 'a' must be a map such as {work: 30m, target: 0.5s}"));
  CHECK(contains(
      error_of("tasks:\n  - {name: a, command: [x], estimate: 3s, partition: {work: 2s, target: "
               "1s}}\n"),
      "wf.yaml:2:29: 'estimate' in task 'a' conflicts with 'partition'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], foreach: {part: [1]}, partition: "
                          "{work: 2s, target: 1s}}\n"),
                 "foreach variable 'part' in task 'a' is taken by 'partition'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], partition: {work: 1000h, target: "
                          "1ms}}\n"),
                 "raise 'target'"));
}
