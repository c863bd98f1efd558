// `chorus run` end to end: the real binary, real processes, a real journal.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

std::size_t index_of(const std::vector<std::string>& lines, const std::string& what) {
  auto it = std::find(lines.begin(), lines.end(), what);
  return it == lines.end() ? lines.size() : static_cast<std::size_t>(it - lines.begin());
}

}  // namespace

TEST_CASE("Integration.Run.DagRunsInDependencyOrder") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: order
tasks:
  - name: a
    command: "echo a >> order.log"
  - name: b
    foreach: {i: "range(0, 4)"}
    command: "echo b{i} >> order.log"
    after: [a]
  - name: c
    command: "echo c >> order.log"
    after: [b]
  - name: d
    command: "echo d >> order.log"
    after: ["b[i=2]"]
)Y");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = read_lines(dir / "order.log");
  REQUIRE(lines.size() == 7);
  auto a = index_of(lines, "a");
  auto c = index_of(lines, "c");
  for (int i = 0; i < 4; ++i) {
    auto b = index_of(lines, "b" + std::to_string(i));
    CHECK(a < b);
    CHECK(b < c);
  }
  CHECK(index_of(lines, "b2") < index_of(lines, "d"));
  CHECK(r.err.find("succeeded") != std::string::npos);
}

TEST_CASE("Integration.Run.FailingTaskFailsRunAndShowsStderr") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: failing
tasks:
  - name: good
    command: [/bin/true]
  - name: bad
    command: "echo 'disk quota exceeded on /scratch' >&2; exit 3"
  - name: downstream
    command: [/bin/true]
    after: [bad]
)Y");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("disk quota exceeded on /scratch") != std::string::npos);
  CHECK(r.err.find("bad") != std::string::npos);
  auto status = run_chorus({"status", "--json", "--tasks"}, dir.path());
  REQUIRE(status.exit_code == 0);
  auto j = nlohmann::json::parse(status.out);
  CHECK(j["status"] == "failed");
  CHECK(j["succeeded"] == 1);
  CHECK(j["failed"] == 1);
  CHECK(j["cancelled"] == 1);  // downstream never ran
}

TEST_CASE("Integration.Run.MissingProgramFailsTaskNotRun") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: missing
tasks:
  - name: ghost
    command: [./does-not-exist, --flag]
  - name: fine
    command: "echo fine > fine.txt"
)Y");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("No such file or directory") != std::string::npos);
  CHECK(read_file(dir / "fine.txt") == "fine\n");
}

TEST_CASE("Integration.Run.RetriesUntilSuccess") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: flaky
tasks:
  - name: flaky
    command: "echo x >> tries.log; test $(wc -l < tries.log) -ge 3"
    retries: 2
)Y");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_lines(dir / "tries.log").size() == 3);
}

TEST_CASE("Integration.Run.TimeoutKillsWholeProcessGroup") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: slow
tasks:
  - name: slow
    command: "sleep 300 & echo $! > child.pid; sleep 300"
    timeout: 1s
)Y");
  auto r = run_chorus({"run", "wf.yaml", "--grace", "500ms"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("timed_out") != std::string::npos);
  auto pid = static_cast<pid_t>(std::stol(read_file(dir / "child.pid")));
  CHECK(eventually([&] { return !process_alive(pid); }, 5));
}

TEST_CASE("Integration.Run.JsonPrintsOneEventPerLine") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: json
tasks:
  - name: t
    foreach: {i: [1, 2, 3]}
    command: [/bin/true]
)Y");
  auto r = run_chorus({"run", "wf.yaml", "--json"}, dir.path());
  REQUIRE(r.exit_code == 0);
  std::size_t finished = 0, lines = 0;
  bool summary = false;
  std::size_t start = 0;
  while (start < r.out.size()) {
    auto end = r.out.find('\n', start);
    auto j = nlohmann::json::parse(r.out.substr(start, end - start));
    ++lines;
    if (j["event"] == "task" && j["state"] == "succeeded") ++finished;
    if (j["event"] == "summary") summary = j["succeeded"] == 3;
    start = end + 1;
  }
  CHECK(finished == 3);
  CHECK(summary);
  CHECK(lines == 1 + 6 + 1);  // run, 3 x (running, succeeded), summary
}

TEST_CASE("Integration.Run.TaskEnvironmentAndLogs") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: envs
tasks:
  - name: show
    foreach: {part: [7]}
    command: "echo run=$CHORUS_RUN_ID task=$CHORUS_TASK part=$part mine=$MINE; echo oops >&2"
    env: {MINE: "v{part}"}
)Y");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  REQUIRE(r.exit_code == 0);
  auto logs = run_chorus({"logs", "latest", "show[part=7]"}, dir.path());
  CHECK(logs.exit_code == 0);
  CHECK(logs.out == "run=envs-1 task=show[part=7] part=7 mine=v7\n");
  CHECK(logs.err == "oops\n");
  auto typo = run_chorus({"logs", "latest", "show[part=8]"}, dir.path());
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("did you mean 'show[part=7]'") != std::string::npos);
}

TEST_CASE("Integration.Validate.ReportsFileLineColumn") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: typo
tasks:
  - name: a
    comand: [/bin/true]
)Y");
  auto r = run_chorus({"validate", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("wf.yaml:4:5:") != std::string::npos);
  CHECK(r.err.find("did you mean 'command'") != std::string::npos);
  auto run = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(run.exit_code == 2);
  CHECK(!file_exists(dir / ".chorus/chorus.db"));  // nothing ran, nothing journaled

  write_file(dir / "ok.yaml", "name: fine\ntasks:\n  - name: a\n    command: [/bin/true]\n");
  auto ok = run_chorus({"validate", "ok.yaml"}, dir.path());
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("1 tasks") != std::string::npos);
}

TEST_CASE("Integration.Commands.ListStatusAndErrors") {
  TempDir dir;
  auto none = run_chorus({"status"}, dir.path());
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no Chorus journal") != std::string::npos);
  write_file(dir / "wf.yaml", "name: twice\ntasks:\n  - name: a\n    command: [/bin/true]\n");
  REQUIRE(run_chorus({"run", "wf.yaml"}, dir.path()).exit_code == 0);
  REQUIRE(run_chorus({"run", "wf.yaml"}, dir.path()).exit_code == 0);
  auto list = run_chorus({"list"}, dir.path());
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("twice-1") != std::string::npos);
  CHECK(list.out.find("twice-2") != std::string::npos);
  auto status = run_chorus({"status", "twice-1"}, dir.path());
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("succeeded") != std::string::npos);
  auto unknown = run_chorus({"status", "nope-9"}, dir.path());
  CHECK(unknown.exit_code == 2);
  auto cancel_done = run_chorus({"cancel", "twice-1"}, dir.path());
  CHECK(cancel_done.exit_code == 0);
  CHECK(cancel_done.out.find("already succeeded") != std::string::npos);
}

TEST_CASE("Integration.Import.WfCommonsTraceReplaysThroughTheRuntime") {
  TempDir dir;
  auto imported = run_chorus({"import", "wfcommons",
                              source_dir() + "/../shared/data/wfcommons/"
                                             "montage-chameleon-2mass-015d-001.json",
                              "-o", "montage.yaml"},
                             dir.path());
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  auto r = run_chorus({"run", "montage.yaml", "--replay-scale", "0.0005", "--json"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"succeeded\":310") != std::string::npos);
  auto bad = run_chorus({"run", "montage.yaml", "--replay-scale", "-1"}, dir.path());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--replay-scale must be a positive number") != std::string::npos);
}
