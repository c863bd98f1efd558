// `job: {name: ..., weight: w}` on tasks: the job weights the reader collects for uwfq and cfq,
// and its located errors.
#include <doctest/doctest.h>

#include <string>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::parse;

TEST_CASE("Workflows.JobWeights.MapFormNamesTheJobAndWeighsIt") {
  auto g = parse(R"Y(scheduler: {queue: uwfq}
tasks:
  - {name: a, command: [x], job: {name: train, weight: 2}}
  - name: b
    command: [x, "{i}"]
    foreach: {i: [1, 2]}
    job: {name: train}
  - {name: c, command: [x], job: {name: eval, weight: 0.5}}
  - {name: d, command: [x], job: etl}
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(chorus::test::find_task(*g, "a")->job == "train");
  CHECK(chorus::test::find_task(*g, "b[i=2]")->job == "train");
  CHECK(chorus::test::find_task(*g, "d")->job == "etl");
  CHECK(g->scheduler.job_weights.size() == 2);  // etl has no weight of its own: 1
  CHECK(g->scheduler.job_weights.at("train") == 2);
  CHECK(g->scheduler.job_weights.at("eval") == 0.5);
}

TEST_CASE("Workflows.JobWeights.TasksOfARepeatGroupWeighTheirJob") {
  auto g = parse(R"Y(tasks:
  - repeat: loop
    max_rounds: 2
    until: {file: "round-{round}/m.json", key: /done, equals: true}
    tasks:
      - {name: step, command: [x], job: {name: sim, weight: 3}}
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->scheduler.job_weights.at("sim") == 3);
}

TEST_CASE("Workflows.JobWeights.BadWeightsAreLocatedErrors") {
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: j, weight: 0}}\n"),
                 "wf.yaml:2:52: 'job.weight' in task 'a' must be a positive number such as 2, "
                 "got '0'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: j, weight: -1}}\n"),
                 "wf.yaml:2:52: 'job.weight' in task 'a' must be a positive number"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: j, weight: heavy}}\n"),
                 "wf.yaml:2:52: 'job.weight' in task 'a' must be a positive number such as 2, "
                 "got 'heavy'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: j, weight: .nan}}\n"),
                 "wf.yaml:2:52: 'job.weight' in task 'a' must be a positive number"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: j, weight: [2]}}\n"),
                 "wf.yaml:2:52: 'job.weight' in task 'a' must be a positive number"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {weight: 2}}\n"),
                 "wf.yaml:2:34: 'job' in task 'a' needs a 'name'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: j, wieght: 2}}\n"),
                 "wf.yaml:2:44: unknown key 'wieght'"));
  CHECK(contains(error_of("tasks:\n  - {name: a, command: [x], job: {name: '', weight: 2}}\n"),
                 "'job.name' in task 'a' must not be empty"));
}

TEST_CASE("Workflows.JobWeights.AJobHasOneWeight") {
  std::string e = error_of(R"Y(tasks:
  - {name: a, command: [x], job: {name: j, weight: 2}}
  - {name: b, command: [x], job: {name: j, weight: 3}}
)Y");
  CHECK(contains(e,
                 "wf.yaml:3:52: job 'j' is given weight 3 in task 'b' but 2 in task 'a' "
                 "(line 2): a job has one weight"));
  // The same weight twice is fine.
  auto g = parse(R"Y(tasks:
  - {name: a, command: [x], job: {name: j, weight: 2}}
  - {name: b, command: [x], job: {name: j, weight: 2.0}}
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->scheduler.job_weights.at("j") == 2);
}
