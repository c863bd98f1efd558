#include <doctest/doctest.h>

#include <algorithm>

#include "support/workflow_parsing.hpp"
#include "workflows/wfcommons_export.hpp"

using namespace chorus;
using chorus::test::error_of;
using chorus::test::find_task;
using chorus::test::parse;

namespace {

constexpr std::string_view kQuickstart = R"Y(name: quickstart
defaults: {retries: 0, timeout: 10m, cores: 1}
tasks:
  - name: generate
    command: [./gen, --rows, "1000"]      # a list is an argv; no shell unless `shell: true`
    outputs: [data.csv]
  - name: transform
    foreach: {part: "range(0, 64)"}      # a sweep: one task per value, named transform[part=3]
    command: [./transform, "{part}"]
    after: [generate]
    cores: 1
    env: {OMP_NUM_THREADS: "1"}
  - name: reduce
    command: "cat out/*.txt | ./reduce"  # a string runs under /bin/sh -c
    after: [transform]                   # after a sweep = after all its members
    retries: 2
    timeout: 30s
)Y";

std::string value_of(const KeyValues& kv, const std::string& key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return v;
  }
  return "<missing>";
}

}  // namespace

TEST_CASE("Workflows.Loader.QuickstartBuildsTheGraph") {
  auto r = parse(kQuickstart);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const WorkflowGraph& g = *r;
  CHECK(validate_graph(g).ok());
  CHECK(g.name == "quickstart");
  CHECK(g.workdir == "/home/u/run");
  CHECK(g.source_path == "wf.yaml");
  REQUIRE(g.tasks.size() == 66);

  const TaskSpec& gen = g.tasks[0];
  CHECK(gen.name == "generate");
  CHECK(gen.cmd.argv == std::vector<std::string>{"./gen", "--rows", "1000"});
  CHECK(!gen.cmd.uses_shell());
  CHECK(gen.outputs == std::vector<std::string>{"data.csv"});
  CHECK(gen.after.empty());
  CHECK(gen.timeout == std::chrono::minutes(10));
  CHECK(gen.kind == TaskKind::executable);
  CHECK(gen.ranks == 1);
  CHECK(gen.per_rank == Resources{1, 0, 0});

  for (int p = 0; p < 64; ++p) {
    const TaskSpec& t = g.tasks[1 + p];
    CHECK(t.name == "transform[part=" + std::to_string(p) + "]");
    CHECK(t.cmd.argv == std::vector<std::string>{"./transform", std::to_string(p)});
    CHECK(t.after == std::vector<TaskId>{0});
    CHECK(t.params == KeyValues{{"part", std::to_string(p)}});
    CHECK(t.env == KeyValues{{"OMP_NUM_THREADS", "1"}});
  }

  const TaskSpec& reduce = g.tasks[65];
  CHECK(reduce.name == "reduce");
  CHECK(reduce.cmd.uses_shell());
  CHECK(reduce.cmd.shell == "cat out/*.txt | ./reduce");
  REQUIRE(reduce.after.size() == 64);
  for (TaskId i = 0; i < 64; ++i) CHECK(reduce.after[i] == 1 + i);
  CHECK(reduce.retries == 2);
  CHECK(reduce.timeout == std::chrono::seconds(30));
}

TEST_CASE("Workflows.Loader.NameDefaultsToFileStem") {
  auto r = parse_workflow_text("tasks: [{name: a, command: [true]}]", "dir/my-flow.yaml",
                               chorus::test::test_options());
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->name == "my-flow");
}

TEST_CASE("Workflows.Loader.SweepOfTwoVariablesIsACartesianProduct") {
  auto r = parse(R"Y(
tasks:
  - name: train
    foreach:
      lr: ["0.1", "0.01"]
      seed: "range(1, 7, 2)"
    command: [./train, "--lr={lr}", "--seed", "{seed}"]
    outputs: ["model-{lr}-{seed}.pt"]
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  std::vector<std::string> names;
  for (const auto& t : r->tasks) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"train[lr=0.1,seed=1]", "train[lr=0.1,seed=3]",
                                          "train[lr=0.1,seed=5]", "train[lr=0.01,seed=1]",
                                          "train[lr=0.01,seed=3]", "train[lr=0.01,seed=5]"});
  const TaskSpec* t = find_task(*r, "train[lr=0.01,seed=3]");
  REQUIRE(t != nullptr);
  CHECK(t->cmd.argv == std::vector<std::string>{"./train", "--lr=0.01", "--seed", "3"});
  CHECK(t->outputs == std::vector<std::string>{"model-0.01-3.pt"});
  CHECK(t->params == KeyValues{{"lr", "0.01"}, {"seed", "3"}});
}

TEST_CASE("Workflows.Loader.NegativeStepRange") {
  auto r =
      parse(R"Y(tasks: [{name: c, foreach: {i: "range(10, 0, -4)"}, command: [echo, "{i}"]}])Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r->tasks.size() == 3);
  CHECK(r->tasks[0].name == "c[i=10]");
  CHECK(r->tasks[1].name == "c[i=6]");
  CHECK(r->tasks[2].name == "c[i=2]");
}

TEST_CASE("Workflows.Loader.PlaceholdersEverywhereAndEscapes") {
  auto r = parse(R"Y(
tasks:
  - name: s
    foreach: {x: [a, b]}
    command: "awk '{{print $1}}' in-{x}.txt > out-{x}.txt"
    env: {WHICH: "{x}", BRACES: "{{x}}"}
    workdir: "runs/{x}"
    inputs: ["in-{x}.txt"]
    outputs: "out-{x}.txt"
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const TaskSpec* b = find_task(*r, "s[x=b]");
  REQUIRE(b != nullptr);
  CHECK(b->cmd.shell == "awk '{print $1}' in-b.txt > out-b.txt");
  CHECK(value_of(b->env, "WHICH") == "b");
  CHECK(value_of(b->env, "BRACES") == "{x}");
  CHECK(b->workdir == "/home/u/run/runs/b");
  CHECK(b->inputs == std::vector<std::string>{"in-b.txt"});
  CHECK(b->outputs == std::vector<std::string>{"out-b.txt"});
}

TEST_CASE("Workflows.Loader.PlainTaskUnescapesBraces") {
  auto r = parse(R"Y(tasks: [{name: a, command: "echo ${{HOME}}"}])Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].cmd.shell == "echo ${HOME}");
}

TEST_CASE("Workflows.Loader.DefaultsAreInheritedAndOverridden") {
  auto r = parse(R"Y(
env: {A: top, B: top}
defaults:
  cores: 2
  memory: 1G
  gpus: 1
  retries: 3
  timeout: 1h
  env: {B: defaults, C: defaults}
tasks:
  - name: inherits
    command: [x]
  - name: overrides
    command: [x]
    cores: 4
    memory: 512M
    gpus: 0
    retries: 0
    timeout: 90s
    estimate: 2m
    env: {C: task, D: task}
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const TaskSpec& a = r->tasks[0];
  CHECK(a.per_rank == Resources{2, 1024, 1});
  CHECK(a.retries == 3);
  CHECK(a.timeout == std::chrono::hours(1));
  CHECK(a.estimate == Duration{0});
  CHECK(a.env == KeyValues{{"A", "top"}, {"B", "defaults"}, {"C", "defaults"}});
  const TaskSpec& b = r->tasks[1];
  CHECK(b.per_rank == Resources{4, 512, 0});
  CHECK(b.retries == 0);
  CHECK(b.timeout == std::chrono::seconds(90));
  CHECK(b.estimate == std::chrono::minutes(2));
  CHECK(b.env == KeyValues{{"A", "top"}, {"B", "defaults"}, {"C", "task"}, {"D", "task"}});
}

TEST_CASE("Workflows.Loader.WorkdirResolution") {
  auto r = parse(R"Y(
workdir: scratch/../out
tasks:
  - {name: plain, command: [x]}
  - {name: relative, command: [x], workdir: sub/dir/}
  - {name: absolute, command: [x], workdir: /tmp/abs}
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->workdir == "/home/u/run/out");
  CHECK(r->tasks[0].workdir.empty());  // runs in the workflow's workdir
  CHECK(r->tasks[1].workdir == "/home/u/run/out/sub/dir");
  CHECK(r->tasks[2].workdir == "/tmp/abs");

  auto abs = parse("workdir: /data/w\ntasks: [{name: a, command: [x]}]");
  REQUIRE(abs.ok());
  CHECK(abs->workdir == "/data/w");

  auto defaults = parse("defaults: {workdir: d}\ntasks: [{name: a, command: [x]}]");
  REQUIRE(defaults.ok());
  CHECK(defaults->tasks[0].workdir == "/home/u/run/d");
}

TEST_CASE("Workflows.Loader.AfterFormsAndDedupe") {
  auto r = parse(R"Y(
tasks:
  - name: prep
    foreach: {i: "range(0, 4)"}
    command: [p, "{i}"]
  - name: one
    command: [o]
    after: "prep[i=2]"
  - name: all
    command: [a]
    after: [prep, "prep[i=1]", one, one]
  - name: pairwise
    foreach: {i: "range(0, 4)"}
    command: [q, "{i}"]
    after: ["prep[i={i}]"]
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(validate_graph(*r).ok());
  CHECK(find_task(*r, "one")->after == std::vector<TaskId>{2});
  CHECK(find_task(*r, "all")->after == std::vector<TaskId>{0, 1, 2, 3, 4});
  for (int i = 0; i < 4; ++i) {
    const TaskSpec* t = find_task(*r, "pairwise[i=" + std::to_string(i) + "]");
    REQUIRE(t != nullptr);
    CHECK(t->after == std::vector<TaskId>{static_cast<TaskId>(i)});
  }
}

TEST_CASE("Workflows.Loader.ShellTrueJoinsAList") {
  auto r = parse(R"Y(
defaults: {shell: true}
tasks:
  - {name: joined, command: [cat, "out/*.txt", "|", ./reduce]}
  - {name: argv, command: [ls, "-l"], shell: false}
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].cmd.shell == "cat out/*.txt | ./reduce");
  CHECK(r->tasks[0].cmd.argv.empty());
  CHECK(r->tasks[1].cmd.argv == std::vector<std::string>{"ls", "-l"});
}

TEST_CASE("Workflows.Loader.KindExecutableAndDescriptionAccepted") {
  auto r = parse(R"Y(
description: a test
tasks:
  - {name: a, kind: executable, description: hi, command: [x]}
)Y");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].kind == TaskKind::executable);
}

TEST_CASE("Workflows.Loader.ResourceCheckSkippedWhenNodeUnknown") {
  WorkflowLoadOptions o;  // largest_node all zero: unknown
  o.base_dir = "/w";
  auto r = parse("tasks: [{name: big, command: [x], cores: 512, gpus: 8}]", o);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].per_rank == Resources{512, 0, 8});
}

TEST_CASE("Workflows.Loader.ReadsTheWfCommonsReplayExport") {
  // `chorus import wfcommons` writes YAML through workflows/wfcommons_export; it must load back.
  WorkflowGraph g;
  g.name = "montage";
  TaskSpec a;
  a.name = "mProject_0001";
  a.per_rank = {2, 1500, 0};
  a.estimate = std::chrono::milliseconds(12'500);
  g.add(a);
  TaskSpec b;
  b.name = "odd[name]/x";
  b.after = {0};
  g.add(b);
  auto r = parse(wfcommons_to_yaml(g));
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r->tasks.size() == 2);
  CHECK(r->name == "montage");
  CHECK(r->tasks[0].name == "mProject_0001");
  CHECK(r->tasks[0].per_rank == Resources{2, 1500, 0});
  CHECK(r->tasks[0].estimate == std::chrono::milliseconds(12'500));
  CHECK(r->tasks[1].after == std::vector<TaskId>{0});
}

TEST_CASE("Workflows.Loader.TasksCarryTheirEntrysPosition") {
  // The name's value of each entry: a sweep's members and a repeat group's tasks share their
  // entry's, the group's gate is at its `repeat:` name; code-built tasks have none.
  auto g = parse(R"Y(tasks:
  - name: prep
    command: [x]
  - name: train
    foreach: {lr: [1, 2]}
    command: [x, "{lr}"]
  - repeat: loop
    max_rounds: 2
    until: {file: out.json, key: /done, equals: true}
    tasks:
      - name: step
        command: [x]
)Y");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  auto at = [&](std::string_view name) {
    const TaskSpec* t = find_task(*g, name);
    REQUIRE_MESSAGE(t != nullptr, name);
    return std::pair{t->pos.line, t->pos.column};
  };
  CHECK(at("prep") == std::pair{2, 11});
  CHECK(at("train[lr=1]") == std::pair{4, 11});
  CHECK(at("train[lr=2]") == std::pair{4, 11});
  for (const auto& t : g->tasks) {
    if (t.name.rfind("step", 0) == 0)
      CHECK(std::pair{t.pos.line, t.pos.column} == std::pair{11, 15});
  }
  CHECK(at("loop").first == 7);
  CHECK(TaskSpec{}.pos.line == 0);
}
