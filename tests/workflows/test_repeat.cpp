// `repeat:` groups: round 1 in the graph, the held gate, later rounds from RepeatGroup::expand, the
// `until` condition read from a JSON file, and bad input.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::find_task;
using chorus::test::parse;

namespace {

const char* const kLearn = R"Y(name: al
services:
  - name: surrogate
    command: [./surrogate]
    ready: {tcp: 5555}
tasks:
  - name: setup
    command: [./make_candidates, round-1/candidates.json]
  - repeat: learn
    max_rounds: 6
    after: [setup]
    until: {file: "round-{round}/metrics.json", key: /improved, equals: false}
    tasks:
      - name: simulate
        foreach: {cfg: "range(0, 2)"}
        command: [./heat, "round-{round}/candidates.json", "{cfg}"]
      - name: score
        after: [simulate]
        uses: [surrogate]
        command: [./score, "--round", "{round}"]
        workdir: "round-{round}"
  - name: report
    after: [learn]
    command: [./report]
)Y";

std::string env_of(const TaskSpec& t, const std::string& key) {
  for (const auto& [k, v] : t.env) {
    if (k == key) return v;
  }
  return "<unset>";
}

std::vector<std::string> names_of(const std::vector<TaskSpec>& tasks) {
  std::vector<std::string> out;
  for (const auto& t : tasks) out.push_back(t.name);
  return out;
}

// A fresh directory, removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/chorus-repeat-XXXXXX";
    char* p = ::mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path = p;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::path p = std::filesystem::path(path) / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
};

Result<WorkflowGraph> parse_in(const std::string& yaml, const std::string& dir) {
  WorkflowLoadOptions o = chorus::test::test_options();
  o.base_dir = dir;
  return parse_workflow_text(yaml, "wf.yaml", o);
}

std::string group_with_until(const std::string& until) {
  return "tasks:\n  - repeat: g\n    max_rounds: 3\n    until: " + until +
         "\n    tasks:\n      - name: a\n        command: [x]\n";
}

}  // namespace

TEST_CASE("Workflows.Repeat.RoundOneAndGate") {
  auto g = parse(kLearn);
  REQUIRE(g.ok());
  CHECK(names_of(g->tasks) == std::vector<std::string>{"setup", "simulate[round=1,cfg=0]",
                                                       "simulate[round=1,cfg=1]", "score[round=1]",
                                                       "learn", "report", "surrogate"});
  REQUIRE(g->repeats.size() == 1);
  const RepeatGroup& r = g->repeats[0];
  CHECK(r.name == "learn");
  CHECK(r.max_rounds == 6);
  CHECK(r.line == 9);
  CHECK(r.column == 13);
  CHECK(r.first_round == std::vector<TaskId>{1, 2, 3});
  CHECK(r.gate == 4);

  const TaskSpec& gate = g->tasks[4];
  CHECK(gate.held);
  CHECK(gate.kind == TaskKind::function);
  CHECK(gate.per_rank == Resources{0, 0, 0});
  CHECK(gate.after == std::vector<TaskId>{1, 2, 3});
  REQUIRE(gate.fn);
  CHECK(gate.fn().ok());
  // Outside tasks after the group wait for the gate; round 1 waits for the group's `after`.
  CHECK(find_task(*g, "report")->after == std::vector<TaskId>{4});
  CHECK(g->tasks[1].after == std::vector<TaskId>{0});
  CHECK(g->tasks[3].after == std::vector<TaskId>{0, 1, 2});

  const TaskSpec& sim = g->tasks[2];
  CHECK(sim.cmd.argv == std::vector<std::string>{"./heat", "round-1/candidates.json", "1"});
  CHECK(sim.params == KeyValues{{"round", "1"}, {"cfg", "1"}});
  CHECK(env_of(sim, "CHORUS_ROUND") == "1");
  const TaskSpec& score = g->tasks[3];
  CHECK(score.uses == std::vector<ServiceId>{0});
  CHECK(score.workdir == "/home/u/run/round-1");
  CHECK(score.cmd.argv == std::vector<std::string>{"./score", "--round", "1"});
  CHECK(validate_graph(*g).ok());
}

TEST_CASE("Workflows.Repeat.ExpandBuildsLaterRounds") {
  auto g = parse(kLearn);
  REQUIRE(g.ok());
  const RepeatGroup& r = g->repeats[0];
  auto plan = r.expand(2);
  REQUIRE(plan.ok());
  CHECK(names_of(plan->tasks) == std::vector<std::string>{"simulate[round=2,cfg=0]",
                                                          "simulate[round=2,cfg=1]",
                                                          "score[round=2]"});
  REQUIRE(plan->local_after.size() == 3);
  CHECK(plan->local_after[0].empty());
  CHECK(plan->local_after[1].empty());
  CHECK(plan->local_after[2] == std::vector<std::uint32_t>{0, 1});
  // The group's `after` (setup) only holds round 1 back.
  for (const auto& t : plan->tasks) CHECK(t.after.empty());
  const TaskSpec& score = plan->tasks[2];
  CHECK(score.cmd.argv == std::vector<std::string>{"./score", "--round", "2"});
  CHECK(score.workdir == "/home/u/run/round-2");
  CHECK(score.uses == std::vector<ServiceId>{0});
  CHECK(env_of(score, "CHORUS_ROUND") == "2");
  CHECK(score.params == KeyValues{{"round", "2"}});
  CHECK(plan->tasks[1].cmd.argv ==
        std::vector<std::string>{"./heat", "round-2/candidates.json", "1"});

  // Deterministic, and usable after the graph it came from is gone.
  RepeatGroup copy;
  {
    auto other = parse(kLearn);
    REQUIRE(other.ok());
    copy = other->repeats[0];
  }
  auto again = copy.expand(6);
  REQUIRE(again.ok());
  CHECK(again->tasks[2].name == "score[round=6]");
  CHECK(names_of(copy.expand(2)->tasks) == names_of(plan->tasks));
  CHECK(!copy.expand(1).ok());
  CHECK(contains(copy.expand(7).status().message(),
                 "repeat group 'learn' has rounds 2 to 6 to build, not round 7"));
}

TEST_CASE("Workflows.Repeat.MemberReferencesAndOutsideDependencies") {
  auto g = parse(R"Y(tasks:
  - name: prep
    foreach: {cfg: [a, b]}
    command: [x]
  - repeat: loop
    max_rounds: 2
    until: {file: m.json, key: /done, equals: true}
    tasks:
      - name: sim
        foreach: {cfg: [a, b]}
        command: [x]
        after: ["prep[cfg={cfg}]"]
      - name: post
        foreach: {cfg: [a, b]}
        command: [x]
        after: ["sim[cfg={cfg}]"]
      - name: post2
        foreach: {cfg: [a, b]}
        command: [x]
        after: ["sim[round={round},cfg={cfg}]", "sim[cfg=a]"]
)Y");
  REQUIRE(g.ok());
  CHECK(find_task(*g, "sim[round=1,cfg=b]")->after == std::vector<TaskId>{1});
  CHECK(find_task(*g, "post[round=1,cfg=b]")->after == std::vector<TaskId>{3});
  CHECK(find_task(*g, "post2[round=1,cfg=b]")->after == std::vector<TaskId>{2, 3});
  auto plan = g->repeats[0].expand(2);
  REQUIRE(plan.ok());
  CHECK(plan->tasks[1].name == "sim[round=2,cfg=b]");
  CHECK(plan->tasks[1].after == std::vector<TaskId>{1});  // prep[cfg=b], outside the group
  CHECK(plan->local_after[3] == std::vector<std::uint32_t>{1});
  CHECK(plan->local_after[5] == std::vector<std::uint32_t>{0, 1});
  CHECK(plan->tasks[5].after.empty());
}

TEST_CASE("Workflows.Repeat.UntilReadsTheRoundsJsonFile") {
  TempDir dir;
  auto g = parse_in(kLearn, dir.path);
  REQUIRE(g.ok());
  const RepeatGroup& r = g->repeats[0];
  dir.write("round-1/metrics.json", R"({"improved": true, "loss": 0.5})");
  dir.write("round-2/metrics.json", R"({"improved": false})");
  auto one = r.until(1);
  REQUIRE(one.ok());
  CHECK(*one == false);
  auto two = r.until(2);
  REQUIRE(two.ok());
  CHECK(*two == true);

  auto missing = r.until(3);
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == ErrorCode::not_found);
  CHECK(contains(missing.status().message(), "repeat group 'learn' (wf.yaml:9): until, round 3: '" +
                                                 dir.path +
                                                 "/round-3/metrics.json' does not exist"));

  dir.write("round-4/metrics.json", "{\n  \"improved\": tru\n}");
  auto bad = r.until(4);
  REQUIRE(!bad.ok());
  CHECK(contains(bad.status().message(), "repeat group 'learn' (wf.yaml:9): until, round 4: " +
                                             dir.path + "/round-4/metrics.json:2:"));
  CHECK(contains(bad.status().message(), ": invalid JSON: "));

  dir.write("round-5/metrics.json", R"({"loss": 1})");
  auto no_key = r.until(5);
  REQUIRE(!no_key.ok());
  CHECK(contains(no_key.status().message(), "round-5/metrics.json has no key '/improved'"));

  dir.write("round-6/metrics.json", R"({"improved": "no"})");
  auto mismatch = r.until(6);
  REQUIRE(!mismatch.ok());
  CHECK(contains(mismatch.status().message(),
                 "key '/improved' in " + dir.path +
                     "/round-6/metrics.json is a string (\"no\"), but 'until' compares it with a "
                     "boolean (false)"));
}

TEST_CASE("Workflows.Repeat.UntilComparisons") {
  TempDir dir;
  dir.write("m.json", R"({"loss": 0.25, "stage": "done", "n": [1, 2, 3]})");
  auto holds = [&](const std::string& until) -> Result<bool> {
    auto g = parse_in(group_with_until(until), dir.path);
    REQUIRE(g.ok());
    return g->repeats[0].until(1);
  };
  CHECK(*holds("{file: m.json, key: /loss, below: 0.3}") == true);
  CHECK(*holds("{file: m.json, key: /loss, below: 0.25}") == false);
  CHECK(*holds("{file: m.json, key: /loss, above: 0.1}") == true);
  CHECK(*holds("{file: m.json, key: /loss, above: 1}") == false);
  CHECK(*holds("{file: m.json, key: /stage, equals: done}") == true);
  CHECK(*holds("{file: m.json, key: /stage, not_equals: done}") == false);
  CHECK(*holds("{file: m.json, key: /n/2, equals: 3}") == true);
  CHECK(*holds("{file: m.json, key: /n/0, not_equals: 3}") == true);
  CHECK(*holds("{file: m.json, key: /loss, equals: 0.25}") == true);
  CHECK(*holds("{file: m.json, key: /stage, equals: \"0.25\"}") == false);
  auto wrong = holds("{file: m.json, key: /stage, below: 1}");
  REQUIRE(!wrong.ok());
  CHECK(contains(wrong.status().message(), "is a string (\"done\"), but 'below' needs a number"));
  auto beyond = holds("{file: m.json, key: /n/7, equals: 1}");
  REQUIRE(!beyond.ok());
  CHECK(contains(beyond.status().message(), "m.json has no key '/n/7'"));
  // A relative file is relative to the workflow's workdir, not the base directory.
  auto g = parse_in("workdir: sub\n" + group_with_until("{file: m.json, key: /loss, below: 1}"),
                    dir.path);
  REQUIRE(g.ok());
  CHECK(contains(g->repeats[0].until(1).status().message(), dir.path + "/sub/m.json"));
}

TEST_CASE("Workflows.Repeat.BadGroups") {
  std::string m = error_of("tasks:\n  - repeat: g\n    tasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:2:13: repeat group 'g' has no 'max_rounds'"));
  CHECK(contains(m, "wf.yaml:2:13: repeat group 'g' has no 'until'"));
  m = error_of(
      "tasks:\n  - repeat: g\n    max_rounds: 2\n    until: {file: f, key: /a, equals: 1}\n");
  CHECK(contains(m, "wf.yaml:2:13: repeat group 'g' has no 'tasks:'"));
  m = error_of(
      "tasks:\n  - repeat: g\n    max_rounds: 0\n    until: {file: f, key: /a, equals: "
      "1}\n    tasks: []\n");
  CHECK(contains(m,
                 "wf.yaml:3:17: 'max_rounds' in repeat group 'g' must be between 1 and 10000, "
                 "got 0"));
  CHECK(contains(m, "wf.yaml:5:12: 'tasks' of repeat group 'g' must be a non-empty list of tasks"));
  m = error_of(group_with_until("{file: f, key: /a}"));
  CHECK(contains(m,
                 "wf.yaml:4:12: 'until' of repeat group 'g' needs one comparison: equals, "
                 "not_equals, below or above"));
  m = error_of(group_with_until("{file: f, key: /a, equals: 1, below: 2}"));
  CHECK(contains(m,
                 "wf.yaml:4:42: 'until' of repeat group 'g' has two comparisons ('equals' and "
                 "'below'); keep one"));
  m = error_of(group_with_until("{file: f, key: a/b, equals: 1}"));
  CHECK(contains(m,
                 "wf.yaml:4:27: 'key' in the 'until' of repeat group 'g' is not a JSON pointer "
                 "(RFC 6901, such as /metrics/0/loss): "));
  m = error_of(group_with_until("{file: f, key: \"/a~2\", equals: 1}"));
  CHECK(
      contains(m, "wf.yaml:4:27: 'key' in the 'until' of repeat group 'g' is not a JSON pointer"));
  m = error_of(group_with_until("{file: f, key: /a, above: big}"));
  CHECK(contains(m,
                 "wf.yaml:4:38: 'above' in the 'until' of repeat group 'g' must be a number, "
                 "got 'big'"));
  m = error_of(group_with_until("{key: /a, equals: 1, equal: 2}"));
  CHECK(contains(m, "wf.yaml:4:12: 'until' of repeat group 'g' has no 'file'"));
  CHECK(contains(m,
                 "wf.yaml:4:33: unknown key 'equal' in the 'until' of repeat group 'g' (did "
                 "you mean 'equals'?)"));
  m = error_of(group_with_until("{file: \"r-{rnd}.json\", key: /a, equals: 1}"));
  CHECK(
      contains(m, "wf.yaml:4:19: unknown placeholder '{rnd}' in the 'until' of repeat group 'g'"));
}

TEST_CASE("Workflows.Repeat.BadReferences") {
  const std::string group = R"Y(  - repeat: learn
    max_rounds: 2
    until: {file: f, key: /a, equals: 1}
    tasks:
      - name: simulate
        command: [x]
)Y";
  std::string m =
      error_of("tasks:\n" + group + "  - name: report\n    command: [x]\n    after: [simulate]\n");
  CHECK(contains(m,
                 "wf.yaml:10:13: task 'report' depends on 'simulate', but 'simulate' is inside "
                 "repeat group 'learn'; depend on 'learn' instead"));
  m = error_of("tasks:\n" + group +
               "      - name: score\n        command: [x]\n        after: [learn]\n");
  CHECK(contains(m,
                 "wf.yaml:10:17: task 'score' is inside repeat group 'learn' and cannot depend "
                 "on the group itself"));
  m = error_of("tasks:\n" + group + "      - repeat: inner\n        max_rounds: 2\n");
  CHECK(contains(m,
                 "wf.yaml:8:9: repeat groups cannot be nested: repeat group 'learn' holds "
                 "another 'repeat:'"));
  m = error_of("tasks:\n" + group +
               "      - name: sweep\n        foreach: {round: [1]}\n        command: [x]\n");
  CHECK(contains(m,
                 "wf.yaml:9:9: foreach variable 'round' in task 'sweep' clashes with repeat "
                 "group 'learn', which sets {round} to the round number"));
  m = error_of("tasks:\n  - name: learn\n    command: [x]\n" + group);
  CHECK(contains(m, "wf.yaml:4:13: duplicate task name 'learn' (first defined on line 2)"));
  m = error_of("tasks:\n  - name: pre\n    foreach: {i: [1, 2]}\n    command: [x]\n" + group +
               "      - name: s2\n        command: [x]\n        after: [\"pre[i={round}]\"]\n");
  CHECK(contains(
      m, "'{round}' in 'after' of task 's2' may only name tasks of its repeat group 'learn'"));
  m = error_of(
      "tasks:\n  - repeat: g\n    max_rounds: 2\n    after: [a, zz]\n    until: {file: f, "
      "key: /a, equals: 1}\n    tasks:\n      - name: a\n        command: [x]\n");
  CHECK(contains(m, "wf.yaml:4:13: repeat group 'g' depends on its own task 'a'"));
  CHECK(contains(m, "wf.yaml:4:16: repeat group 'g' depends on unknown task 'zz'"));
  // A cycle through the gate: round 1 waits for report, which waits for the group.
  m = error_of(
      "tasks:\n  - repeat: g\n    max_rounds: 2\n    after: [report]\n    until: {file: "
      "f, key: /a, equals: 1}\n    tasks:\n      - name: a\n        command: [x]\n  - "
      "name: report\n    command: [x]\n    after: [g]\n");
  CHECK(contains(m, "dependency cycle: "));
  m = error_of(
      "tasks:\n  - repeat: g\n    command: [x]\n    max_rounds: 1\n    until: {file: f, "
      "key: /a, equals: 1}\n    tasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:3:5: 'command' belongs in a task of the repeat group's 'tasks:'"));
}

TEST_CASE("Workflows.Repeat.AllThreeBlocksLoadFromAFile") {
  TempDir dir;
  dir.write("learn.yaml", kLearn);
  auto g = load_workflow_file(dir.path + "/learn.yaml", chorus::test::test_options());
  REQUIRE(g.ok());
  CHECK(g->tasks.size() == 7);
  CHECK(g->services.size() == 1);
  CHECK(g->repeats.size() == 1);
  CHECK(validate_graph(*g).ok());
  // Defaults may carry `uses` into group tasks too.
  auto d = parse(std::string("defaults: {uses: surrogate}\n") + kLearn);
  REQUIRE(d.ok());
  CHECK(find_task(*d, "simulate[round=1,cfg=0]")->uses == std::vector<ServiceId>{0});
  CHECK(d->repeats[0].expand(2)->tasks[0].uses == std::vector<ServiceId>{0});
  CHECK(find_task(*d, "surrogate")->uses.empty());
}
