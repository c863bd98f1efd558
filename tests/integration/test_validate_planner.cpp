// `chorus validate` of a workflow whose scheduler names a planner: tasks without a runtime
// estimate are reported at their entries in the file, as `chorus run` reports them.
#include <doctest/doctest.h>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

const char* kWorkflow = R"Y(name: planned
scheduler: {planner: spwd}
tasks:
  - {name: root, command: [x], estimate: 1s}
  - {name: a, command: [x], after: [root]}
  - name: sweep
    foreach: {i: "range(0, 3)"}
    command: [x]
    after: [a]
  - {name: sink, command: [x], estimate: 1s, after: [sweep]}
)Y";

}  // namespace

TEST_CASE("Integration.ValidatePlanner.LocatesTasksWithoutEstimates") {
  TempDir dir;
  write_file(dir / "wf.yaml", kWorkflow);
  const auto run = run_chorus({"validate", "wf.yaml"}, dir.path());
  INFO(run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("wf.yaml:5:12: planner spwd needs a runtime estimate for every task, and "
                     "'a' has none") != std::string::npos);
  CHECK(run.err.find("wf.yaml:6:11: planner spwd needs a runtime estimate for every task, and "
                     "'sweep' (3 members) have none") != std::string::npos);
  CHECK(run.err.find("'root'") == std::string::npos);

  // `chorus run` refuses the same file with the same located lines, before it journals anything.
  const auto refused = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("wf.yaml:5:12: planner spwd needs a runtime estimate") !=
        std::string::npos);
  CHECK_FALSE(file_exists(dir / ".chorus/chorus.db"));
}

TEST_CASE("Integration.ValidatePlanner.AcceptsEstimatesOrNoPlanner") {
  TempDir dir;
  std::string text = kWorkflow;
  write_file(dir / "wf.yaml",
             text.replace(text.find("scheduler: {planner: spwd}"), 26, "scheduler: {queue: fifo}"));
  auto run = run_chorus({"validate", "wf.yaml"}, dir.path());
  INFO(run.err);
  CHECK(run.exit_code == 0);

  text = kWorkflow;
  text.replace(text.find("command: [x], after: [root]"), 27,
               "command: [x], after: [root], estimate: 2s");
  text.replace(text.find("    command: [x]\n    after: [a]"), 16,
               "    estimate: 3s\n    command: [x]");
  write_file(dir / "wf.yaml", text);
  run = run_chorus({"validate", "wf.yaml"}, dir.path());
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("ok") != std::string::npos);
}
