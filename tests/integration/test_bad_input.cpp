// Bad input through the real binary (issue 12): `chorus validate`, `run --json`, `simulate` and
// `import wfcommons` refuse it with a located message and exit status 2; none crashes or hangs.
// Every command runs under timeout(1), so a hang fails its case instead of the suite.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// chorus with `args` in `cwd`, killed after 60 s (exit 137).
ProcessResult chorus_bounded(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv{"timeout", "-s", "KILL", "60", chorus_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, cwd);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Integration.BadInput.ValidateRefusesAnUnterminatedQuote") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "tasks:\n  - name: a\n    command: \"echo hi\n  - name: b\n    command: [x]\n");
  auto r = chorus_bounded({"validate", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "wf.yaml:3:14: this double-quoted string is never closed"));
}

TEST_CASE("Integration.BadInput.InvalidUtf8IsRefusedByValidateAndRunJson") {
  TempDir dir;
  write_file(dir / "wf.yaml", "tasks:\n  - name: \"a\xff\"\n    command: [true]\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", "wf.yaml"},
        std::vector<std::string>{"run", "--json", "wf.yaml"}}) {
    CAPTURE(args[0]);
    auto r = chorus_bounded(args, dir.path());
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "wf.yaml:2:13: invalid UTF-8: byte 0xFF"));
  }
}

TEST_CASE("Integration.BadInput.AnAliasBombIsRefusedQuickly") {
  TempDir dir;
  std::string yaml = "env: {BIG: &big \"" + std::string(10'240, 'x') + "\"}\n";
  yaml += "tasks:\n  - name: a\n    command: [echo";
  for (int i = 0; i < 100'000; ++i) yaml += ", *big";
  yaml += "]\n";
  write_file(dir / "wf.yaml", yaml);
  auto r = chorus_bounded({"validate", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "wf.yaml:1:12: this file holds more than 128 MiB of YAML"));
}

TEST_CASE("Integration.BadInput.ANulInAWorkdirIsRefused") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "tasks:\n  - name: a\n    workdir: \"/tmp\\0/x\"\n    command: [true]\n");
  auto r = chorus_bounded({"validate", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "wf.yaml:3:14: a NUL character"));
}

TEST_CASE("Integration.BadInput.SimulateRefusesRuntimesPastTheClock") {
  TempDir dir;
  write_file(dir / "w.json",
             R"({"jobs": [{"id": "j", "user": "a", "arrival": 0, "tasks": {"count": 3, )"
             R"("runtime": 1.7e308}}]})");
  auto json = chorus_bounded({"simulate", "--workload", "w.json"}, dir.path());
  CHECK(json.exit_code == 2);
  CHECK(contains(json.err, "w.json: jobs[0].tasks.runtime: 1.7e+308 s is out of range"));

  write_file(dir / "w.csv", "job,user,arrival,runtime\n\"j1,a,0,1\n");
  auto csv = chorus_bounded({"simulate", "--workload", "w.csv"}, dir.path());
  CHECK(csv.exit_code == 2);
  CHECK(contains(csv.err, "w.csv:2:1: unterminated quote in field 1 (column 'job')"));

  // A divisible job of 1e9 s cut into 1 ms pieces would be 10^12 tasks.
  write_file(dir / "d.json", R"([{"id": "d", "user": "a", "arrival": 0, "divisible": true, )"
                             R"("tasks": [{"runtime": 1e9}]}])");
  auto split =
      chorus_bounded({"simulate", "--workload", "d.json", "--partition", "1ms"}, dir.path());
  CHECK(split.exit_code == 2);
  CHECK(contains(split.err, "--partition 1ms splits the workload into more than 10000000 tasks"));

  // Ten tasks of about 1e9 s each, one after another: 1e10 s, past the 9.2e9 s of the clock.
  std::string yaml = "tasks:\n";
  for (int i = 0; i < 10; ++i) {
    yaml += "  - name: t" + std::to_string(i) + "\n    command: [true]\n    estimate: 11574d\n";
    if (i > 0) yaml += "    after: [t" + std::to_string(i - 1) + "]\n";
  }
  write_file(dir / "wf.yaml", yaml);
  auto wf =
      chorus_bounded({"simulate", "--workload", "wf.yaml", "--state", dir / "state"}, dir.path());
  CHECK(wf.exit_code == 2);
  CHECK(contains(wf.err,
                 "wf.yaml:37:11: chorus simulate cannot replay this workflow: its tasks "
                 "up to 't9' run one after another for"));
}

TEST_CASE("Integration.BadInput.ImportWfCommonsRefusesOutOfRangeNumbers") {
  TempDir dir;
  write_file(dir / "t.json", R"({"schemaVersion": "1.5", "workflow": {
    "specification": {"tasks": [{"id": "a", "parents": []}, {"id": "b", "parents": "a"}]},
    "execution": {"tasks": [{"id": "a", "runtimeInSeconds": 1, "coreCount": 1e300},
                            {"id": "b", "runtimeInSeconds": 1}]}}})");
  auto r = chorus_bounded({"import", "wfcommons", "t.json", "-o", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err,
                 "t.json: workflow.execution.tasks[0].coreCount: 1e+300 is out of range "
                 "(1..1048576)"));
  CHECK_FALSE(file_exists(dir / "wf.yaml"));
}
