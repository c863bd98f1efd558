// Every kind of bad workflow gives "path:line:col: message" diagnostics; each case checks the
// position and the text.
#include <doctest/doctest.h>

#include <algorithm>

#include "schedulers/policy_registry.hpp"
#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::test_options;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// The message has exactly one line equal to `line`.
void check_has_line(const std::string& message, const std::string& line) {
  auto lines = lines_of(message);
  CHECK_MESSAGE(std::count(lines.begin(), lines.end(), line) == 1, "expected line:\n  " << line
                                                                                        << "\nin:\n"
                                                                                        << message);
}

}  // namespace

TEST_CASE("Workflows.Errors.YamlSyntaxErrorHasItsMark") {
  std::string m = error_of("tasks:\n  - name: a\n    command: [x\n  - name: b\n");
  check_has_line(m, "wf.yaml:4:9: YAML syntax error: end of sequence flow not found");
  m = error_of("tasks:\n  - name: a\n   command: x\n");
  CHECK(m.starts_with("wf.yaml:3:"));
  CHECK(contains(m, "YAML syntax error: "));
}

TEST_CASE("Workflows.Errors.UnknownKeysSuggestTheClosestKey") {
  std::string m = error_of(R"Y(name: x
tasks:
  - name: a
    comand: [x]
    cors: 2
taks: []
)Y");
  check_has_line(m, "wf.yaml:3:11: task 'a' has no 'command'");
  check_has_line(m, "wf.yaml:4:5: unknown key 'comand' in task 'a' (did you mean 'command'?)");
  check_has_line(m, "wf.yaml:5:5: unknown key 'cors' in task 'a' (did you mean 'cores'?)");
  check_has_line(m, "wf.yaml:6:1: unknown key 'taks' at the top level (did you mean 'tasks'?)");
  // Keys other tools use, with what they are called here.
  const std::string other = error_of(R"Y(tasks:
  - name: a
    command: [x]
    sweep: {i: [1, 2]}
    depends_on: [b]
)Y");
  check_has_line(other,
                 "wf.yaml:4:5: unknown key 'sweep' in task 'a' (for a sweep, use "
                 "'foreach: {i: \"range(0, 10)\"}' or 'foreach: {x: [a, b]}')");
  check_has_line(other,
                 "wf.yaml:5:5: unknown key 'depends_on' in task 'a' (for dependencies, "
                 "use 'after: [names]')");
  // Sorted by position.
  CHECK(m.find("3:11") < m.find("4:5"));

  m = error_of("defaults: {corse: 2}\ntasks: [{name: a, command: [x], env: {A: 1}}]");
  check_has_line(m, "wf.yaml:1:12: unknown key 'corse' in defaults (did you mean 'cores'?)");

  m = error_of("tasks: [{name: a, command: [x], zzzz: 1}]");
  check_has_line(m, "wf.yaml:1:33: unknown key 'zzzz' in task 'a'");
}

TEST_CASE("Workflows.Errors.MisplacedKeysSayWhereTheyBelong") {
  std::string m = error_of("cores: 4\ntasks: [{name: a, command: [x]}]");
  CHECK(contains(m,
                 "wf.yaml:1:1: 'cores' cannot be set at the top level; put it under "
                 "'defaults:'"));
  m = error_of("defaults: {command: [x]}\ntasks: [{name: a, command: [x]}]");
  CHECK(contains(m, "wf.yaml:1:12: 'command' cannot be set in defaults"));
}

TEST_CASE("Workflows.Errors.ReservedKeysAreRefused") {
  std::string m = error_of(R"Y(scheduler: {queue: fifo, planner: heft}
services: {}
user: bob
tasks:
  - name: a
    command: [x]
    kind: mpi
    ranks: 1
  - name: b
    command: [x]
    kind: service
    uses: [a]
    user: eve
  - name: c
    command: [x]
    kind: exectuable
)Y");
  check_has_line(m,
                 "wf.yaml:1:26: 'planner' cannot be combined with 'queue' in 'scheduler': the "
                 "plan decides both the order and the placement of tasks");
  check_has_line(m,
                 "wf.yaml:2:11: 'services' must be a list of services (each '- name: ...'), "
                 "got a map");
  check_has_line(m,
                 "wf.yaml:11:11: kind 'service' is not a task kind: declare services under the "
                 "top-level 'services:' and name them in the task's 'uses:'");
  check_has_line(m,
                 "wf.yaml:16:11: unknown kind 'exectuable' in task 'c' (did you mean "
                 "'executable'?)");
}

TEST_CASE("Workflows.Scheduler.SectionAndUsers") {
  WorkflowLoadOptions options;
  options.base_dir = "/tmp";
  auto g = parse_workflow_text(R"Y(name: s
user: alice
scheduler:
  queue: uwfq
  placement: first-fit
  weights: {alice: 2, bob: 0.5}
tasks:
  - name: a
    command: [x]
  - name: b
    user: bob
    command: [x]
)Y",
                               "wf.yaml", options);
  REQUIRE(g.ok());
  CHECK(g->scheduler.queue == "uwfq");
  CHECK(g->scheduler.queue_at.line == 4);
  CHECK(g->scheduler.queue_at.column == 10);
  CHECK(g->scheduler.placement == "first-fit");
  const OptionEntry* weights = g->scheduler.options.find("weights");
  REQUIRE(weights != nullptr);
  auto users = user_weights_of(weights->value);
  REQUIRE(users.has_value());
  CHECK(users->at("alice") == 2.0);
  CHECK(users->at("bob") == 0.5);
  CHECK(g->tasks[0].user == "alice");
  CHECK(g->tasks[1].user == "bob");
  // The policies check their options (as the CLI loads files), with the file's other problems.
  WorkflowLoadOptions checked = test_options();
  const auto registry = PolicyRegistry::with_builtins();
  checked.check_scheduler = [&](const SchedulerChoice& c) { return registry.check(c); };
  std::string bad = error_of(R"Y(scheduler: {weights: {alice: 0, bob: x}, queeu: fifo}
tasks:
  - name: a
    user: ""
    command: [x]
)Y",
                             checked);
  check_has_line(bad,
                 "wf.yaml:1:30: the weight of user 'alice' must be a positive number, got '0'");
  check_has_line(bad, "wf.yaml:1:38: the weight of user 'bob' must be a positive number, got 'x'");
  CHECK(bad.find("unknown key 'queeu' in 'scheduler' (did you mean 'queue'?)") !=
        std::string::npos);
  check_has_line(bad, "wf.yaml:4:11: 'user' in task 'a' must not be empty");
}

TEST_CASE("Workflows.Errors.MissingOrEmptyCommand") {
  std::string m = error_of(R"Y(tasks:
  - name: a
  - name: b
    command: []
  - name: c
    command: "  "
  - name: d
    command:
  - name: e
    command: {a: 1}
  - name: f
    command: ["", x]
  - name: g
    command: [x, [y]]
)Y");
  check_has_line(m, "wf.yaml:2:11: task 'a' has no 'command'");
  check_has_line(m, "wf.yaml:4:14: 'command' of task 'b' is an empty list");
  check_has_line(m, "wf.yaml:6:14: 'command' of task 'c' is empty");
  check_has_line(m, "wf.yaml:8:5: 'command' of task 'd' is empty");
  check_has_line(m,
                 "wf.yaml:10:14: 'command' of task 'e' must be a string (run by /bin/sh -c) "
                 "or a list (an argv), got a map");
  check_has_line(m, "wf.yaml:12:15: 'command' of task 'f' starts with an empty program name");
  check_has_line(m,
                 "wf.yaml:14:18: each item of 'command' of task 'g' must be a single value, "
                 "got a list");
}

TEST_CASE("Workflows.Errors.StringCommandWithShellFalse") {
  std::string m = error_of("tasks: [{name: a, command: \"ls | wc\", shell: false}]");
  CHECK(contains(m,
                 "wf.yaml:1:28: 'command' of task 'a' is a string, which always runs under "
                 "/bin/sh -c"));
}

TEST_CASE("Workflows.Errors.BadTaskNames") {
  std::string m = error_of(R"Y(tasks:
  - command: [x]
  - name: "a[1]"
    command: [x]
  - name: "x/y"
    command: [x]
  - name: "   "
    command: [x]
  - name: [a]
    command: [x]
  - name: "a{b}"
    command: [x]
)Y");
  check_has_line(m, "wf.yaml:2:5: task #1 has no 'name'");
  CHECK(contains(m, "wf.yaml:3:11: task name 'a[1]' must not contain '[', ']' or '/'"));
  check_has_line(m, "wf.yaml:5:11: task name 'x/y' must not contain '[', ']' or '/'");
  check_has_line(m, "wf.yaml:7:11: a task name must not be empty");
  check_has_line(m, "wf.yaml:9:11: the name of task #5 must be a string, got a list");
  CHECK(contains(m, "wf.yaml:11:11: task name 'a{b}' must not contain '{' or '}'"));
}

TEST_CASE("Workflows.Errors.DuplicateTaskNamePointsAtTheSecond") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
  - name: b
    command: [x]
  - name: a
    command: [y]
)Y");
  CHECK(m == "wf.yaml:6:11: duplicate task name 'a' (first defined on line 2)");
}

TEST_CASE("Workflows.Errors.DuplicateKeys") {
  std::string m = error_of("tasks:\n  - name: a\n    command: [x]\n    cores: 1\n    cores: 2\n");
  CHECK(m == "wf.yaml:5:5: duplicate key 'cores' in task 'a' (first set on line 4)");
}

TEST_CASE("Workflows.Errors.UnknownDependencySuggests") {
  std::string m = error_of(R"Y(tasks:
  - name: prepare
    command: [x]
  - name: train
    command: [y]
    after: [prep]
  - name: test
    command: [y]
    after: trian
  - name: other
    command: [y]
    after: [zzzzzz]
)Y");
  check_has_line(m,
                 "wf.yaml:6:13: task 'train' depends on unknown task 'prep' (did you mean "
                 "'prepare'?)");
  check_has_line(m,
                 "wf.yaml:9:12: task 'test' depends on unknown task 'trian' (did you mean "
                 "'train'?)");
  check_has_line(m, "wf.yaml:12:13: task 'other' depends on unknown task 'zzzzzz'");
}

TEST_CASE("Workflows.Errors.UnknownSweepMember") {
  std::string m = error_of(R"Y(tasks:
  - name: t
    foreach: {part: "range(0, 4)"}
    command: [x]
  - name: r
    command: [x]
    after: ["t[part=9]"]
)Y");
  CHECK(contains(m,
                 "wf.yaml:7:13: task 'r' depends on unknown task 't[part=9]': sweep 't' has "
                 "no such member"));
  // A placeholder in `after` resolves per member; the first failing member is reported once.
  m = error_of(R"Y(tasks:
  - name: t
    foreach: {part: "range(0, 4)"}
    command: [x]
  - name: q
    foreach: {i: [a, b]}
    command: [x]
    after: ["t[part={i}]"]
)Y");
  CHECK(contains(m, "wf.yaml:8:13: task 'q' depends on unknown task 't[part=a]'"));
  CHECK(lines_of(m).size() == 1);
}

TEST_CASE("Workflows.Errors.SelfDependency") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
    after: a
  - name: s
    foreach: {i: [1, 2]}
    command: [x]
    after: s
)Y");
  check_has_line(m, "wf.yaml:4:12: task 'a' depends on itself");
  CHECK(contains(m, "wf.yaml:8:12: sweep 's' depends on itself"));
}

TEST_CASE("Workflows.Errors.DependencyCyclePrintsTheCycle") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
    after: c
  - name: b
    command: [y]
    after: [a]
  - name: c
    command: [y]
    after: [b]
)Y");
  CHECK(m == "wf.yaml:2:11: dependency cycle: a -> c -> b -> a");

  m = error_of(R"Y(tasks:
  - name: s
    foreach: {i: [1, 2]}
    command: [x]
    after: [r]
  - name: r
    command: [y]
    after: ["s[i=2]"]
)Y");
  CHECK(m == "wf.yaml:2:11: dependency cycle: s[i=2] -> r -> s[i=2]");
}

TEST_CASE("Workflows.Errors.BadNumbersAndDurations") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
    cores: -1
    retries: two
    timeout: -5s
  - name: b
    command: [x]
    cores: 2.5
    timeout: soon
    memory: lots
    gpus: -2
    retries: -1
    estimate: [1]
)Y");
  check_has_line(m, "wf.yaml:4:12: 'cores' in task 'a' must be between 1 and 1000000, got -1");
  check_has_line(m, "wf.yaml:5:14: 'retries' in task 'a' must be a whole number, got 'two'");
  CHECK(contains(m,
                 "wf.yaml:6:14: 'timeout' in task 'a': invalid duration '-5s': must not be "
                 "negative"));
  check_has_line(m, "wf.yaml:9:12: 'cores' in task 'b' must be a whole number, got '2.5'");
  CHECK(contains(m, "wf.yaml:10:14: 'timeout' in task 'b': invalid duration 'soon'"));
  CHECK(contains(m, "wf.yaml:11:13: 'memory' in task 'b': invalid memory size 'lots'"));
  check_has_line(m, "wf.yaml:12:11: 'gpus' in task 'b' must be between 0 and 1000000, got -2");
  check_has_line(m, "wf.yaml:13:14: 'retries' in task 'b' must be between 0 and 10000, got -1");
  CHECK(contains(m, "wf.yaml:14:15: 'estimate' in task 'b' must be a duration"));
  CHECK(lines_of(m).size() == 9);
}

TEST_CASE("Workflows.Errors.TaskTooBigForTheMachine") {
  auto options = chorus::test::test_options();
  options.largest_node = {2, 4096, 0};
  options.machine_phrase = "node cn01";
  std::string m = error_of(R"Y(defaults: {gpus: 1}
tasks:
  - name: big
    command: [x]
    cores: 64
    memory: 8G
  - name: fine
    command: [x]
    gpus: 0
)Y",
                           options);
  check_has_line(m, "wf.yaml:5:12: task 'big' can never run here: needs 64 cores, node cn01 has 2");
  check_has_line(m,
                 "wf.yaml:6:13: task 'big' can never run here: needs 8192 MB of memory, "
                 "node cn01 has 4096 MB");
  // Inherited from defaults: the diagnostic points where the value was written.
  check_has_line(m, "wf.yaml:1:18: task 'big' can never run here: needs 1 GPU, node cn01 has 0");
  CHECK(lines_of(m).size() == 3);
}

TEST_CASE("Workflows.Errors.BadForeach") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
    foreach: {i: "range(5, 5)"}
  - name: b
    command: [x]
    foreach: {i: "range(0, 5, 0)"}
  - name: c
    command: [x]
    foreach: {i: "range(0.5, 5)"}
  - name: d
    command: [x]
    foreach: {i: {a: 1}}
  - name: e
    command: [x]
    foreach: {i: 7}
  - name: f
    command: [x]
    foreach: [i, j]
  - name: g
    command: [x]
    foreach: {i: []}
  - name: h
    command: [x]
    foreach: {i: [a, b, a]}
  - name: k
    command: [x]
    foreach: {i: ["x/y"]}
  - name: l
    command: [x]
    foreach: {"my-var": [1]}
  - name: m
    command: [x]
    foreach: {i: "range(1, 10, -1)"}
)Y");
  check_has_line(m,
                 "wf.yaml:4:18: foreach 'i' in task 'a': 'range(5, 5)' is empty (stop must "
                 "be greater than start)");
  check_has_line(m,
                 "wf.yaml:7:18: foreach 'i' in task 'b': the step of 'range(0, 5, 0)' must "
                 "not be 0");
  check_has_line(m,
                 "wf.yaml:10:18: foreach 'i' in task 'c': range bounds must be whole numbers, "
                 "got '0.5' in 'range(0.5, 5)'");
  CHECK(contains(m, "wf.yaml:13:18: foreach 'i' in task 'd' must be \"range(start, stop)\""));
  CHECK(contains(m, "wf.yaml:16:18: foreach 'i' in task 'e': '7' is not a range"));
  CHECK(contains(m, "wf.yaml:19:14: 'foreach' in task 'f' must be a map of variable: "));
  check_has_line(m, "wf.yaml:22:18: foreach 'i' in task 'g' has no values");
  check_has_line(m, "wf.yaml:25:25: foreach 'i' in task 'h' lists 'a' twice (first on line 25)");
  CHECK(contains(m,
                 "wf.yaml:28:19: foreach 'i' in task 'k': foreach value 'x/y' cannot be part "
                 "of a task name"));
  CHECK(contains(m, "wf.yaml:31:15: foreach variable 'my-var' in task 'l' must be a name"));
  CHECK(contains(m, "wf.yaml:34:18: foreach 'i' in task 'm': 'range(1, 10, -1)' is empty"));
}

TEST_CASE("Workflows.Errors.TooManyTasks") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
  - name: s
    command: [x]
    foreach: {i: "range(0, 1000)", j: "range(0, 1000)"}
)Y");
  check_has_line(m,
                 "wf.yaml:6:5: too many tasks: sweep 's' has 1000000 members and 1 tasks come "
                 "before it; a workflow may have at most 1000000 tasks");
  m = error_of("tasks: [{name: a, command: [x], foreach: {i: \"range(0, 2000000)\"}}]");
  CHECK(contains(m, "'range(0, 2000000)' has 2000000 values, more than the limit of 1000000"));
}

TEST_CASE("Workflows.Errors.TooManyDependencyLinks") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    command: [x]
    foreach: {i: "range(0, 5000)"}
  - name: b
    command: [x]
    foreach: {i: "range(0, 5000)"}
    after: [a]
)Y");
  CHECK(contains(m,
                 "wf.yaml:8:13: too many dependencies: with sweep 'b' the workflow has "
                 "25000000 'after' links"));
}

TEST_CASE("Workflows.Errors.PlaceholderProblems") {
  std::string m = error_of(R"Y(tasks:
  - name: a
    foreach: {part: [1, 2]}
    command: [x, "{prt}"]
    env: {X: "{nope}"}
  - name: b
    command: "echo ${HOME}"
  - name: c
    command: "awk '{print $1}'"
  - name: d
    command: [x, "a}b", "{open"]
)Y");
  check_has_line(m,
                 "wf.yaml:4:18: unknown placeholder '{prt}' in the command of task 'a' (did "
                 "you mean '{part}'? write '{{' and '}}' for literal braces)");
  check_has_line(m,
                 "wf.yaml:5:14: unknown placeholder '{nope}' in env 'X' of task 'a' "
                 "(foreach variables: part; write '{{' and '}}' for literal braces)");
  check_has_line(m,
                 "wf.yaml:7:14: unknown placeholder '{HOME}' in the command of task 'b' (the "
                 "task has no foreach variables; write '{{' and '}}' for literal braces)");
  check_has_line(m,
                 "wf.yaml:9:14: '{print $1}' is not a placeholder in the command of task 'c' "
                 "(write '{{' and '}}' for literal braces)");
  CHECK(contains(m, "wf.yaml:11:18: '}' without a matching '{'"));
  CHECK(contains(m, "wf.yaml:11:25: '{' is never closed"));
}

TEST_CASE("Workflows.Errors.WrongTypes") {
  std::string m = error_of(R"Y(env: [A]
defaults: [1]
tasks:
  - name: a
    command: [x]
    after: {x: 1}
    env: [a, b]
    outputs: {a: b}
    shell: maybe
    workdir: [w]
  - name: b
    command: [x]
    env: {"1BAD": x, OK: [1]}
  - just a string
)Y");
  check_has_line(m, "wf.yaml:1:6: the top-level env must be a map of NAME: value, got a list");
  check_has_line(m, "wf.yaml:2:11: 'defaults' must be a map, got a list");
  check_has_line(m,
                 "wf.yaml:6:12: 'after' in task 'a' must be a list or a single value, got a "
                 "map");
  check_has_line(m, "wf.yaml:7:10: the env of task 'a' must be a map of NAME: value, got a list");
  check_has_line(m,
                 "wf.yaml:8:14: 'outputs' in task 'a' must be a list or a single value, got a "
                 "map");
  check_has_line(m, "wf.yaml:9:12: 'shell' in task 'a' must be true or false, got 'maybe'");
  check_has_line(m, "wf.yaml:10:14: 'workdir' in task 'a' must be a string, got a list");
  CHECK(contains(m,
                 "wf.yaml:13:11: '1BAD' in the env of task 'b' is not a valid environment "
                 "variable name"));
  check_has_line(m,
                 "wf.yaml:13:26: the value of 'OK' in the env of task 'b' must be a single "
                 "value, got a list");
  check_has_line(m,
                 "wf.yaml:14:5: task #3 must be a map with at least 'name' and 'command', got "
                 "'just a string'");
}

TEST_CASE("Workflows.Errors.TopLevelShape") {
  CHECK(error_of("- a\n- b\n") ==
        "wf.yaml:1:1: the top level of a workflow must be a map with 'tasks:' (and optionally "
        "name, defaults, env, workdir), got a list");
  CHECK(error_of("just text") ==
        "wf.yaml:1:1: the top level of a workflow must be a map with 'tasks:' (and optionally "
        "name, defaults, env, workdir), got 'just text'");
  CHECK(error_of("name: x\n") == "wf.yaml:1:1: the workflow has no 'tasks:' list");
  CHECK(error_of("name: x\ntasks: []\n") ==
        "wf.yaml:2:8: 'tasks' is empty: a workflow needs at least one task");
  CHECK(error_of("name: x\ntasks:\n") ==
        "wf.yaml:2:1: 'tasks' must be a list of tasks (each '- name: ...'), got nothing");
  CHECK(error_of("name: x\ntasks: {a: 1}\n") ==
        "wf.yaml:2:8: 'tasks' must be a list of tasks (each '- name: ...'), got a map");
  CHECK(error_of("name: \"\"\ntasks: [{name: a, command: [x]}]") ==
        "wf.yaml:1:7: 'name' must not be empty");
  CHECK(error_of("tasks: [{name: a, command: [x]}]\n---\ntasks: []\n") ==
        "wf.yaml:3:1: a workflow file holds one YAML document; a second one starts here (remove "
        "the '---' or split the file)");
}

TEST_CASE("Workflows.Errors.EmptyAndCommentOnlyText") {
  CHECK(error_of("") == "wf.yaml:1:1: the file is empty; a workflow needs at least 'tasks:'");
  CHECK(error_of("  \n\n") == "wf.yaml:1:1: the file is empty; a workflow needs at least 'tasks:'");
  CHECK(error_of("# nothing\n") ==
        "wf.yaml:1:1: the file holds no workflow (only comments or blank lines); it needs at least "
        "'tasks:'");
}

TEST_CASE("Workflows.Errors.DeepNestingIsAnErrorNotACrash") {
  std::string flow = "tasks: " + std::string(10'000, '[');
  CHECK(error_of(flow) ==
        "wf.yaml:1:72: nesting is deeper than 64 levels; a workflow needs only "
        "a few");
  std::string map = "x: ";
  for (int i = 0; i < 10'000; ++i) map += "{a: ";
  CHECK(contains(error_of(map), "nesting is deeper than 64 levels"));
  // Block sequences ("- - - ...") are not pre-scanned: yaml-cpp's own depth guard stops them.
  std::string dashes;
  for (int i = 0; i < 10'000; ++i) dashes += "- ";
  CHECK(error_of(dashes + "x") == "wf.yaml:1:1000: nesting is too deep for a workflow file");
  std::string block;
  for (int i = 0; i < 3'000; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
  CHECK(contains(error_of(block), "nesting is too deep for a workflow file"));
}

TEST_CASE("Workflows.Errors.NestingPrescanIgnoresQuotesCommentsAndBlockScalars") {
  const std::string deep(100, '[');
  auto r = chorus::test::parse("tasks:\n  - name: a\n    # " + deep + "\n    command: \"echo " +
                               deep + "\"\n    description: |\n      " + deep +
                               "\n      {{{{\n  - name: b\n    command: echo " + deep + "\n");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].cmd.shell == "echo " + deep);
  CHECK(r->tasks[1].cmd.shell == "echo " + deep);
}

TEST_CASE("Workflows.Errors.AtMostTwentyLines") {
  std::string yaml = "tasks:\n";
  for (int i = 0; i < 30; ++i) yaml += "  - {name: t" + std::to_string(i) + ", command: []}\n";
  auto lines = lines_of(error_of(yaml));
  REQUIRE(lines.size() == 20);
  CHECK(lines[0].starts_with("wf.yaml:2:"));
  CHECK(lines[18].starts_with("wf.yaml:20:"));
  CHECK(lines[19] == "wf.yaml: ... and 11 more problems not shown");
}

TEST_CASE("Workflows.Errors.LaterPhasesWaitForEarlierOnes") {
  // The unknown key stops loading before references are resolved, so 'nope' is not reported.
  std::string m = error_of("tasks: [{name: a, command: [x], after: nope, colour: red}]");
  CHECK(contains(m, "unknown key 'colour'"));
  CHECK(!contains(m, "nope"));
}

TEST_CASE("Workflows.Errors.MutatedInputNeverCrashes") {
  // Seeded byte mutations of a valid file: each must load or fail with located diagnostics.
  const std::string base = R"Y(name: q
defaults: {retries: 0, timeout: 10m, cores: 1}
env: {A: "1"}
tasks:
  - name: generate
    command: [./gen, --rows, "1000"]
    outputs: [data.csv]
  - name: transform
    foreach: {part: "range(0, 8)", m: [a, b]}
    command: [./transform, "{part}", "{{x}}"]
    after: [generate]
    env: {OMP_NUM_THREADS: "1"}
  - name: reduce
    command: "cat out/*.txt | ./reduce"
    after: [transform, "transform[part=1,m=a]"]
    retries: 2
)Y";
  const std::string alphabet = "[]{}:,-'\"#|>&*!%@` \n\t{}0a\\?";
  std::uint64_t state = 42;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>(state >> 33);
  };
  int ok = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = next() % text.size();
      switch (next() % 3) {
        case 0:
          text[at] = alphabet[next() % alphabet.size()];
          break;
        case 1:
          text.insert(at, 1, alphabet[next() % alphabet.size()]);
          break;
        default:
          text.erase(at, 1);
          break;
      }
    }
    auto r = chorus::test::parse(text);
    if (r.ok()) {
      ++ok;
      CHECK(validate_graph(*r).ok());
      continue;
    }
    for (const auto& line : lines_of(r.status().message())) {
      CHECK_MESSAGE(line.starts_with("wf.yaml"), line);
    }
  }
  CHECK(ok > 0);  // some mutations (inside strings, comments) keep the file valid
}

TEST_CASE("Workflows.Errors.StrayCommaIsASyntaxErrorNotAnOutOfMemory") {
  // Each of these makes yaml-cpp 0.7 allocate until the process dies; the pre-scan stops them.
  const std::string expected =
      "YAML syntax error: ',' outside [...] or {...} (quote the value if the comma belongs to it)";
  CHECK(error_of(",ame: q\ntasks: []\n") == "wf.yaml:1:1: " + expected);
  CHECK(error_of("- a\n,\n") == "wf.yaml:2:1: " + expected);
  CHECK(error_of("[a], b\n") == "wf.yaml:1:4: " + expected);
  CHECK(error_of("---\n  ,a\n") == "wf.yaml:2:3: " + expected);
  CHECK(error_of("--- ,a\n") == "wf.yaml:1:5: " + expected);
  CHECK(error_of("tasks:\n  - name: a\n    command: \"x\" ,\n") == "wf.yaml:3:18: " + expected);
  // Commas inside values and flow collections are fine.
  auto r = chorus::test::parse("tasks: [{name: a, command: [x, \"y,z\", a,b]}]\n");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].cmd.argv == std::vector<std::string>{"x", "y,z", "a", "b"});
  r = chorus::test::parse("tasks:\n  - name: b\n    command: echo a, b\n");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->tasks[0].cmd.shell == "echo a, b");
}

TEST_CASE("Workflows.Mpi.KindRanksAndPerRankResources") {
  WorkflowLoadOptions options;
  options.base_dir = "/tmp";
  options.largest_node = Resources{8, 0, 0};
  auto g = parse_workflow_text(R"Y(name: m
tasks:
  - name: sim
    kind: mpi
    ranks: 4
    cores_per_rank: 2
    command: [./sim]
)Y",
                               "wf.yaml", options);
  REQUIRE(g.ok());
  const auto& t = g->tasks[0];
  CHECK(t.kind == TaskKind::mpi);
  CHECK(t.ranks == 4);
  CHECK(t.per_rank.cores == 2);
  CHECK(t.total().cores == 8);
  auto too_big = parse_workflow_text(R"Y(name: m
tasks:
  - name: sim
    kind: mpi
    ranks: 5
    cores_per_rank: 2
    command: [./sim]
)Y",
                                     "wf.yaml", options);
  REQUIRE(!too_big.ok());
  CHECK(too_big.status().message() ==
        "wf.yaml:5:12: task 'sim' can never run here: needs 5 ranks x 2 cores = 10 cores, this "
        "machine has 8");
}
