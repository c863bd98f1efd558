// `sources:` and `data:` in workflow files: the values reach TaskSpec::data and
// WorkflowGraph::sources; every bad value is a located error.
#include <doctest/doctest.h>

#include <algorithm>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::find_task;
using chorus::test::parse;

namespace {

bool has_line(const std::string& message, const std::string& line) {
  std::size_t pos = 0;
  while (pos <= message.size()) {
    std::size_t end = message.find('\n', pos);
    if (end == std::string::npos) end = message.size();
    if (message.compare(pos, end - pos, line) == 0) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

TEST_CASE("Workflows.Data.SourcesAndDataReachTheGraph") {
  auto g = parse(R"Y(sources:
  store1: {address: "10.0.0.5:9000"}
  sink: {address: "[fd00::7]:9001", probe: connect}
  quiet: {address: "store.example:80", probe: none}
defaults:
  data: {from: store1}
tasks:
  - name: fetch
    command: [x]
    data: {input: 64MB, output: 16MiB, to: sink, cpu: 2s}
  - name: sweep
    foreach: {i: "range(0, 3)"}
    command: [x, "{i}"]
    data: {input: 1.5G}
  - name: plain
    command: [x]
)Y");
  REQUIRE(g.ok());
  REQUIRE(g->sources.size() == 3);
  CHECK(g->sources[0].name == "store1");
  CHECK(g->sources[0].host == "10.0.0.5");
  CHECK(g->sources[0].port == 9000);
  CHECK(g->sources[0].probe == SourceProbe::data_server);
  CHECK(g->sources[0].line == 2);
  CHECK(g->sources[0].column == 3);
  CHECK(g->sources[1].host == "fd00::7");
  CHECK(g->sources[1].port == 9001);
  CHECK(g->sources[1].probe == SourceProbe::connect);
  CHECK(g->sources[2].probe == SourceProbe::none);

  const TaskSpec* fetch = find_task(*g, "fetch");
  REQUIRE(fetch != nullptr);
  CHECK(fetch->data.input_bytes == 64'000'000u);
  CHECK(fetch->data.output_bytes == 16u * 1024u * 1024u);
  CHECK(fetch->data.from == 0u);  // from defaults
  CHECK(fetch->data.to == 1u);
  CHECK(fetch->data.cpu == std::chrono::seconds(2));
  for (int i = 0; i < 3; ++i) {
    const TaskSpec* m = find_task(*g, "sweep[i=" + std::to_string(i) + "]");
    REQUIRE(m != nullptr);
    CHECK(m->data.input_bytes == 1'500'000'000u);
    CHECK(m->data.from == 0u);
    CHECK(m->data.to == kNoSource);
  }
  const TaskSpec* plain = find_task(*g, "plain");
  REQUIRE(plain != nullptr);
  CHECK(plain->data.from == 0u);  // defaults hold only `from`
  CHECK(plain->data.input_bytes == 0u);
}

TEST_CASE("Workflows.Data.RepeatGroupsCarryData") {
  auto g = parse(R"Y(sources: {s: {address: "h:1"}}
tasks:
  - repeat: learn
    max_rounds: 3
    until: {file: "m.json", key: /done, equals: true}
    tasks:
      - name: step
        command: [x]
        data: {input: 1K, from: s}
)Y");
  REQUIRE(g.ok());
  const TaskSpec* step = find_task(*g, "step[round=1]");
  REQUIRE(step != nullptr);
  CHECK(step->data.input_bytes == 1000u);
  CHECK(step->data.from == 0u);
  REQUIRE(g->repeats.size() == 1);
}

TEST_CASE("Workflows.Data.UndeclaredSourceIsLocatedAndListsTheDeclared") {
  std::string m = error_of(R"Y(sources:
  store1: {address: "h:9000"}
  sink: {address: "h:9001"}
tasks:
  - name: a
    command: [x]
    data: {input: 64MB, from: stor1}
  - name: b
    command: [x]
    data: {output: 1MB, to: elsewhere}
)Y");
  CHECK_MESSAGE(has_line(m,
                         "wf.yaml:7:31: 'data.from' in task 'a' names an undeclared source "
                         "'stor1' (did you mean 'store1'?); declared: store1, sink"),
                m);
  CHECK_MESSAGE(has_line(m,
                         "wf.yaml:10:29: 'data.to' in task 'b' names an undeclared source "
                         "'elsewhere'; declared: store1, sink"),
                m);
  m = error_of("tasks:\n  - name: a\n    command: [x]\n    data: {input: 1M, from: s}\n");
  CHECK_MESSAGE(has_line(m,
                         "wf.yaml:4:29: 'data.from' in task 'a' names 's', but no sources are "
                         "declared (add 'sources: {s: {address: HOST:PORT}}' at the top level)"),
                m);
}

TEST_CASE("Workflows.Data.BadKeysSizesAndMissingSources") {
  std::string m = error_of(R"Y(sources: {s: {address: "h:1"}}
defaults:
  data: {inptu: 1M}
tasks:
  - name: a
    command: [x]
    data: {input: 64 parsecs, from: s}
  - name: b
    command: [x]
    data: {input: 5M}
  - name: c
    command: [x]
    data: [1]
  - name: d
    command: [x]
    data: {output: 2M, cpu: soon}
)Y");
  CHECK_MESSAGE(has_line(m,
                         "wf.yaml:3:10: unknown key 'inptu' in the data in defaults (did you "
                         "mean 'input'?)"),
                m);
  CHECK_MESSAGE(contains(m,
                         "wf.yaml:7:19: 'data.input' in task 'a': invalid data size "
                         "'64 parsecs': unknown unit 'PARSECS'"),
                m);
  CHECK_MESSAGE(has_line(m,
                         "wf.yaml:10:19: 'data.input' in task 'b' needs 'from: SOURCE' (the "
                         "declared source it is read from)"),
                m);
  CHECK_MESSAGE(contains(m, "wf.yaml:13:11: 'data' in task 'c' must be a map such as"), m);
  CHECK_MESSAGE(contains(m, "wf.yaml:16:29: 'data.cpu' in task 'd'"), m);
  // `data` at the top level belongs in a task.
  m = error_of("data: {input: 1M}\ntasks:\n  - name: a\n    command: [x]\n");
  CHECK_MESSAGE(contains(m, "wf.yaml:1:1: 'data' belongs in a task under 'tasks:'"), m);
}

TEST_CASE("Workflows.Data.BadSources") {
  std::string m = error_of(R"Y(sources:
  a: {address: "store1"}
  b: {address: "h:70000"}
  c: {address: "h:"}
  d: {adress: "h:1"}
  e: {address: "h:1", probe: ping}
  f: {address: "fd00::1:9000"}
  a: {address: "h:2"}
  "g/h": {address: "h:1"}
tasks:
  - name: t
    command: [x]
)Y");
  CHECK_MESSAGE(has_line(m,
                         "wf.yaml:2:16: the address of source 'a' 'store1' has no port (write "
                         "HOST:PORT, e.g. 10.0.0.5:9000 or [fd00::5]:9000)"),
                m);
  CHECK_MESSAGE(
      has_line(m,
               "wf.yaml:3:16: the address of source 'b' 'h:70000': port '70000' is not in "
               "1..65535"),
      m);
  CHECK_MESSAGE(contains(m, "wf.yaml:4:16: the address of source 'c' 'h:' has no port"), m);
  CHECK_MESSAGE(contains(m,
                         "wf.yaml:5:7: unknown key 'adress' in source 'd' (did you mean "
                         "'address'?)"),
                m);
  CHECK_MESSAGE(contains(m, "wf.yaml:6:30: unknown probe 'ping' of source 'e'"), m);
  CHECK_MESSAGE(contains(m,
                         "wf.yaml:7:16: the address of source 'f' 'fd00::1:9000': an IPv6 "
                         "address needs brackets"),
                m);
  CHECK_MESSAGE(contains(m, "wf.yaml:8:3: duplicate key 'a' in 'sources'"), m);
  CHECK_MESSAGE(contains(m, "wf.yaml:9:3: source name 'g/h' must be"), m);
}
