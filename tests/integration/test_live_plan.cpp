// `scheduler: {planner: heft|spwd}` through `chorus run`: the real binary, replayed estimates,
// the journal read back and compared with what `chorus plan` prints for the same file.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "api/run_workflow.hpp"
#include "support/journal.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

// Eight tasks; FIFO would start them root, a, b, c, ... while HEFT puts the long chain c -> c2
// first (highest upward rank).
const char* kWorkflow = R"Y(name: planned
scheduler: {planner: PLANNER}
tasks:
  - {name: root, command: [x], estimate: 1s}
  - {name: a, command: [x], estimate: 1s, after: [root]}
  - {name: b, command: [x], estimate: 2s, after: [root]}
  - {name: c, command: [x], estimate: 6s, after: [root]}
  - {name: c2, command: [x], estimate: 5s, after: [c]}
  - {name: d, command: [x], estimate: 3s, after: [a]}
  - {name: e, command: [x], estimate: 2s, after: [b, d]}
  - {name: sink, command: [x], estimate: 1s, after: [e, c2]}
)Y";

std::string workflow(const std::string& planner) {
  std::string text = kWorkflow;
  text.replace(text.find("PLANNER"), 7, planner);
  return text;
}

// Task names in the order their first attempt started, from the journal's sequence.
std::vector<std::string> start_order(const std::vector<chorus::EventRecord>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (e.state == chorus::TaskState::running &&
        std::find(out.begin(), out.end(), e.name) == out.end())
      out.push_back(e.name);
  }
  return out;
}

// `chorus plan` text output: "  name -> type (type/0/0, 7.000..8.000 s)" -> name: (proc, start).
std::map<std::string, std::pair<std::string, double>> planned_slots(const std::string& out) {
  std::map<std::string, std::pair<std::string, double>> slots;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const auto arrow = line.find(" -> ");
    const auto open = line.find(" (");
    const auto comma = line.find(", ", open == std::string::npos ? 0 : open);
    if (line.rfind("  ", 0) != 0 || arrow == std::string::npos || open == std::string::npos ||
        comma == std::string::npos)
      continue;
    const std::string name = line.substr(2, arrow - 2);
    const std::string proc = line.substr(open + 2, comma - open - 2);
    slots[name] = {proc, std::stod(line.substr(comma + 2))};
  }
  return slots;
}

}  // namespace

TEST_CASE("Integration.LivePlan.HeftRunStartsTasksInThePlannedOrder") {
  TempDir dir;
  write_file(dir / "wf.yaml", workflow("heft"));
  // The run's node as a platform file: one machine type of speed 1 with the run's one core.
  write_file(dir / "one.yaml",
             "name: one\nmachine_types:\n  - {name: n, speed: 1, cores: 1, count: 1, price: 1}\n");
  auto run = run_chorus({"run", "wf.yaml", "--cores", "1", "--replay-scale", "0.01"}, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("planned 8 of 8 tasks with heft onto 1 node: makespan 21 s") !=
        std::string::npos);

  auto plan =
      run_chorus({"plan", "wf.yaml", "--platform", "one.yaml", "--planner", "heft"}, dir.path());
  INFO(plan.out);
  REQUIRE(plan.exit_code == 0);
  auto slots = planned_slots(plan.out);
  REQUIRE(slots.size() == 8);
  std::vector<std::string> planned;
  for (const auto& [name, slot] : slots) {
    CHECK(slot.first == "n/0/0");
    planned.push_back(name);
  }
  std::sort(planned.begin(), planned.end(), [&](const std::string& x, const std::string& y) {
    return slots[x].second < slots[y].second;
  });
  // The plan is not the declaration (FIFO) order, so following it is something to check.
  const std::vector<std::string> declared{"root", "a", "b", "c", "c2", "d", "e", "sink"};
  REQUIRE(planned != declared);
  CHECK(planned[1] == "c");

  const auto events = latest_run_events(dir / ".chorus");
  CHECK(start_order(events) == planned);
  std::string node;
  for (const auto& e : events) {
    if (e.state != chorus::TaskState::running) continue;
    if (node.empty()) node = e.node;
    CHECK(e.node == node);  // the run's one node, the plan's n/0/0
  }
  CHECK_FALSE(node.empty());
}

TEST_CASE("Integration.LivePlan.FifoRunOfTheSameFileStartsInDeclarationOrder") {
  // The control for the case above: without the planner the same DAG starts differently.
  TempDir dir;
  std::string text = workflow("heft");
  text.erase(text.find("scheduler:"),
             text.find('\n', text.find("scheduler:")) - text.find("scheduler:") + 1);
  write_file(dir / "wf.yaml", text);
  auto run = run_chorus({"run", "wf.yaml", "--cores", "1", "--replay-scale", "0.01"}, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("planned 8 of") == std::string::npos);
  const auto order = start_order(latest_run_events(dir / ".chorus"));
  REQUIRE(order.size() == 8);
  CHECK(order[1] == "a");
}

TEST_CASE("Integration.LivePlan.SpwdRunSucceedsOnTwoCores") {
  TempDir dir;
  std::string text = workflow("spwd, mss: 4, deadline: 30s");
  write_file(dir / "wf.yaml", text);
  auto run = run_chorus({"run", "wf.yaml", "--cores", "2", "--replay-scale", "0.01"}, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("planned 8 of 8 tasks with spwd onto 1 node") != std::string::npos);
  CHECK(run.err.find("(deadline 30 s: met)") != std::string::npos);
  const auto order = start_order(latest_run_events(dir / ".chorus"));
  REQUIRE(order.size() == 8);
  CHECK(order.front() == "root");
  CHECK(order.back() == "sink");
}

TEST_CASE("Integration.LivePlan.RefusesMissingEstimatesAndAgents") {
  TempDir dir;
  std::string text = workflow("heft");
  text.replace(text.find(", estimate: 3s"), 14, "");  // d has none now
  write_file(dir / "wf.yaml", text);
  auto run = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("planner heft needs a runtime estimate for every task, and 'd' has none") !=
        std::string::npos);
  CHECK_FALSE(file_exists(dir / ".chorus/chorus.db"));

  write_file(dir / "wf.yaml", workflow("heft"));
  run = run_chorus({"run", "wf.yaml", "--agents", "1", "--agent-wait", "1s"}, dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("planner heft with --agents is not supported yet") != std::string::npos);

  write_file(dir / "wf.yaml", workflow("heft, deadline: 2s"));
  run = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("planner heft: infeasible: the fastest possible makespan is 13 s") !=
        std::string::npos);
}

TEST_CASE("Integration.LivePlan.LaunchRefusesAPlannerInsteadOfIgnoringIt") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "name: p\nscheduler: {planner: heft}\ntasks:\n  - name: t\n    command: "
             "[/bin/true]\n    estimate: 1s\n");
  // An allocation as Slurm describes it to the batch script; the refusal comes before anything
  // is started in it.
  auto r = run_process(
      {chorus_bin(), "launch", "wf.yaml"}, dir.path(),
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_JOB_CPUS_PER_NODE", "2"}});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("wf.yaml:2:22: 'planner: heft' is not supported by chorus launch yet") !=
        std::string::npos);
}
