// The CLI's output layer (cli/output/) on streams of the test's own: what each kind of result
// looks like as text and as JSON, that JSON stays valid UTF-8, and when --json output is flushed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "adapters/slurm/slurm_client.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "cli/output/progress_printer.hpp"
#include "schedulers/netaware/features.hpp"
#include "schedulers/sim/metrics.hpp"

namespace chorus::cli {
namespace {

// A stream whose text the test reads back (open_memstream: what was flushed so far).
class Captured {
 public:
  Captured() : file_(open_memstream(&buf_, &size_)) { REQUIRE(file_ != nullptr); }
  ~Captured() {
    std::fclose(file_);
    std::free(buf_);
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  std::FILE* file() const { return file_; }
  // Only what the code under test flushed (or a line the stream wrote through).
  std::string flushed() const { return std::string(buf_ == nullptr ? "" : buf_, size_); }
  std::string text() {
    std::fflush(file_);
    return flushed();
  }

 private:
  char* buf_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

struct Streams {
  Captured out;
  Captured err;
  Output output(OutputMode mode) { return Output(mode, out.file(), err.file()); }
};

RunOutcome failed_outcome(std::size_t failures) {
  RunOutcome o;
  o.run.id = "wf-3";
  o.summary.status = RunStatus::failed;
  o.summary.progress.total = 20;
  o.summary.progress.succeeded = 5;
  o.summary.progress.failed = static_cast<std::int64_t>(failures);
  o.summary.progress.elapsed_s = 2;
  for (std::size_t i = 0; i < failures; ++i) {
    FailedTask f;
    f.name = "t" + std::to_string(i);
    f.message = "exited with code 1";
    f.stderr_path = i == 0 ? "/logs/t0.err" : "";
    o.summary.failures.push_back(f);
  }
  return o;
}

}  // namespace

TEST_CASE("Cli.ExitStatus.ValuesTheReadmeLists") {
  CHECK(kExitOk == 0);
  CHECK(kExitTasksFailed == 1);
  CHECK(kExitBadInput == 2);
  CHECK(kExitError == 3);
  CHECK(kExitCancelled == 130);
}

TEST_CASE("Cli.Output.Error.NamesTheProgramUnlessLocated") {
  Streams s;
  const Output out = s.output(OutputMode::json);  // errors are text in every mode
  out.error("no Chorus journal at /x/chorus.db");
  out.error("wf.yaml:3:5: unknown key 'comand'");
  out.note("services are not simulated: db");
  CHECK(s.err.text() ==
        "chorus: no Chorus journal at /x/chorus.db\n"
        "wf.yaml:3:5: unknown key 'comand'\n"
        "chorus: services are not simulated: db\n");
  CHECK(s.out.text().empty());
}

TEST_CASE("Cli.Output.RunSummary.FailuresTailsAndResume") {
  Streams s;
  const Output out = s.output(OutputMode::plain);
  const RunOutcome outcome = failed_outcome(12);
  RunReport report{outcome, "chorus launch", {"boom\nlast line"}};
  out.run_summary(report);
  const std::string text = s.err.text();
  CHECK(text.rfind(
            "wf-3: failed — 20 tasks: 5 succeeded, 12 failed, 0 cancelled in 2.00s (8.5 tasks/s)\n",
            0) == 0);
  CHECK(text.find("\nt0 failed: exited with code 1\n  stderr (last lines):\nboom\nlast line\n"
                  "  full output: chorus logs wf-3 't0'\n") != std::string::npos);
  CHECK(text.find("\nt9 failed: exited with code 1\n") != std::string::npos);
  CHECK(text.find("t10 failed") == std::string::npos);
  CHECK(text.find("... and 2 more failed tasks (chorus status wf-3)\n") != std::string::npos);
  CHECK(text.find("resume with: chorus launch --resume wf-3\n") != std::string::npos);
  CHECK(s.out.text().empty());
}

TEST_CASE("Cli.Output.RunSummary.NothingWithJson") {
  Streams s;
  const RunOutcome outcome = failed_outcome(1);
  s.output(OutputMode::json).run_summary({outcome, "chorus run", {}});
  CHECK(s.err.text().empty());
  CHECK(s.out.text().empty());
}

TEST_CASE("Cli.Output.RunList.JsonStaysValidUtf8") {
  Streams s;
  RunInfo r;
  r.id = "wf-1";
  r.status = RunStatus::interrupted;
  r.total_tasks = 4;
  r.workflow_path = "/old/\xff\xfe.yaml";  // journaled before invalid UTF-8 was refused
  s.output(OutputMode::json).run_list({r});
  const std::string text = s.out.text();
  auto j = nlohmann::json::parse(text);  // throws on invalid UTF-8
  REQUIRE(j.size() == 1);
  CHECK(j[0]["status"] == "interrupted");
  CHECK(j[0]["file"] == "/old/\xEF\xBF\xBD\xEF\xBF\xBD.yaml");
  CHECK(text.back() == '\n');
}

TEST_CASE("Cli.Output.RunStatus.TextListsFailedTasksAndResume") {
  Streams s;
  RunInfo run;
  run.id = "wf-2";
  run.workflow_name = "wf";
  run.total_tasks = 3;
  std::vector<TaskRecord> tasks(2);
  tasks[0].name = "a";
  tasks[0].state = TaskState::succeeded;
  tasks[0].attempt = 1;
  tasks[1].name = "b";
  tasks[1].state = TaskState::failed;
  tasks[1].attempt = 2;
  tasks[1].detail = "exited with code 1";
  RunStatusReport report{run, RunStatus::failed, 61, {}, 1, tasks, false, {}};
  report.counts[static_cast<std::size_t>(TaskState::succeeded)] = 1;
  report.counts[static_cast<std::size_t>(TaskState::failed)] = 1;
  s.output(OutputMode::plain).run_status(report);
  const std::string text = s.out.text();
  CHECK(text.rfind("run       wf-2 (failed)\nworkflow  wf\n", 0) == 0);
  CHECK(text.find("tasks     3 total: 1 succeeded, 0 running, 1 failed, 0 timed out, 0 cancelled, "
                  "1 not started\n") != std::string::npos);
  CHECK(text.find("  failed     b (attempt 2): exited with code 1\n") != std::string::npos);
  CHECK(text.find(" a (") == std::string::npos);  // not --tasks: only the failed ones
  CHECK(text.find("resume with: chorus run --resume wf-2\n") != std::string::npos);

  Streams js;
  report.all_tasks = true;
  js.output(OutputMode::json).run_status(report);
  auto j = nlohmann::json::parse(js.out.text());
  CHECK(j["status"] == "failed");
  CHECK(j["not_started"] == 1);
  CHECK(j["tasks"].size() == 2);
  CHECK_FALSE(j.contains("nodes"));
}

TEST_CASE("Cli.Output.Simulation.DashForNoJobOfAClass") {
  Streams s;
  sim::Metrics m;
  m.small_mean_response_s = std::numeric_limits<double>::quiet_NaN();
  m.small_p90_response_s = std::numeric_limits<double>::quiet_NaN();
  m.large_mean_response_s = 12.5;
  m.jain_users = 1;
  m.makespan_s = 40;
  SimulationTable table{"mix", 3, 9, "2x4", 8, 1, 7, "", {{"fifo", &m}}};
  s.output(OutputMode::plain).simulation(table);
  const std::string text = s.out.text();
  CHECK(text.rfind("workload mix: 3 jobs, 9 tasks; cluster 2x4 (8 cores); 1 seed from 7\n", 0) ==
        0);
  CHECK(text.find("fifo                 -           -      12.50s") != std::string::npos);
  CHECK(text.find("40.0s\n") != std::string::npos);

  Streams js;
  js.output(OutputMode::json).simulation(table);
  auto j = nlohmann::json::parse(js.out.text());
  CHECK(j["fifo"]["small_mean_response_s"].is_null());
  CHECK(j["fifo"]["makespan_s"] == 40);
}

TEST_CASE("Cli.Output.Endpoints.TableOrNone") {
  Streams s;
  const Output out = s.output(OutputMode::plain);
  out.service_endpoints("wf-1", {});
  out.service_endpoints("wf-2", {{"db", "", "starting"}, {"db[replica=1]", "tcp://h:5", "ready"}});
  out.environment({{"CHORUS_SERVICE_DB", "tcp://h:5"}});
  const std::string text = s.out.text();
  CHECK(text.rfind("run 'wf-1' has no services\nSERVICE ", 0) == 0);
  CHECK(text.find("\ndb                           -                                starting\n") !=
        std::string::npos);
  CHECK(text.find("CHORUS_SERVICE_DB=tcp://h:5\n") != std::string::npos);
}

TEST_CASE("Cli.Output.Progress.JsonFlushedOncePerBatch") {
  Streams s;
  const Output out = s.output(OutputMode::json);
  ProgressPrinter printer(out, "wf");
  printer.on_run_started("wf-9");
  CHECK(s.out.flushed() == "{\"event\":\"run\",\"run\":\"wf-9\"}\n");

  TaskSpec task;
  task.name = "t\xff";  // invalid UTF-8 in a task name still gives valid JSON
  TaskEvent e;
  e.state = TaskState::succeeded;
  e.attempt = 1;
  printer.on_event(task, e);
  printer.on_event(task, e);
  // Not flushed per event: a round that finishes thousands of tasks is one write.
  CHECK(s.out.flushed() == "{\"event\":\"run\",\"run\":\"wf-9\"}\n");
  printer.on_events_done();
  std::string text = s.out.flushed();
  std::size_t lines = 0;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    auto j = nlohmann::json::parse(text.substr(at, nl - at));
    ++lines;
    if (lines > 1) {
      CHECK(j["event"] == "task");
      CHECK(j["exit_code"] == 0);
    }
  }
  CHECK(lines == 3);

  Progress p;
  p.total = 2;
  p.succeeded = 2;
  printer.on_progress(p, /*final=*/false);  // nothing until the end
  CHECK(s.out.flushed() == text);
  printer.on_progress(p, /*final=*/true);
  auto summary = nlohmann::json::parse(s.out.flushed().substr(text.size()));
  CHECK(summary["event"] == "summary");
  CHECK(summary["succeeded"] == 2);
  CHECK(s.err.text().empty());
}

TEST_CASE("Cli.Output.Progress.HumanFailuresOnStderr") {
  Streams s;
  ProgressPrinter printer(s.output(OutputMode::plain), "wf");
  printer.on_run_started("wf-9");
  TaskSpec task;
  task.name = "t";
  TaskEvent e;
  e.state = TaskState::failed;
  e.attempt = 1;
  e.detail = "exited with code 2";
  printer.on_event(task, e);
  CHECK(s.err.text() ==
        "wf-9: started (journal: chorus status wf-9)\n"
        "task 't' failed (attempt 1): exited with code 2\n");
  CHECK(s.out.text().empty());
}

TEST_CASE("Cli.Output.Slurm.JsonOneObjectPerJobAndLine") {
  Streams s;
  SlurmJobInfo a;
  a.job_id = 12;
  a.state = SlurmJobState::completed;
  SlurmJobInfo b;
  b.job_id = 13;
  s.output(OutputMode::json).slurm_jobs({{a, "/w/a.yaml", "2026-11-30T08:45:12Z"}, {b, "", ""}});
  const std::string text = s.out.text();
  const std::size_t nl = text.find('\n');
  REQUIRE(nl != std::string::npos);
  CHECK(nlohmann::json::parse(text.substr(0, nl))["job_id"] == 12);
  CHECK(nlohmann::json::parse(text.substr(nl + 1))["job_id"] == 13);

  Streams h;
  const Output out = h.output(OutputMode::plain);
  out.submitted(12, /*parsable=*/false);
  CHECK(h.out.flushed() == "Submitted batch job 12\n");  // flushed at once
}

}  // namespace chorus::cli

namespace chorus::cli {

TEST_CASE("Cli.Output.Why.CandidatesBasisAndWhatDiffers") {
  PlacementRow row;
  row.task = 3;
  row.name = "fetch";
  row.attempt = 2;
  row.policy = "network-aware";
  row.basis = "model m.json";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> chosen(kFeatureCount, 1.0f), runner(kFeatureCount, 1.0f);
  chosen[static_cast<std::size_t>(Feature::down_mbps)] = 200;
  runner[static_cast<std::size_t>(Feature::down_mbps)] = 20;  // 0.9 apart
  chosen[static_cast<std::size_t>(Feature::rx_mbps)] = 10;
  runner[static_cast<std::size_t>(Feature::rx_mbps)] = 5;       // 0.5 apart
  runner[static_cast<std::size_t>(Feature::backlog_kb)] = nan;  // known on one side: 1
  chosen[static_cast<std::size_t>(Feature::child_cpu)] = nan;
  runner[static_cast<std::size_t>(Feature::child_cpu)] = nan;  // unknown on both: left out
  row.candidates = {{"n2", 4.5, chosen}, {"n1", 12.25, runner}, {"n3", std::nan(""), {}}};
  const auto diffs = placement_differences(row, 5);
  REQUIRE(diffs.size() == 3);
  CHECK(diffs[0].feature == "backlog_kb");
  CHECK(diffs[1].feature == "down_mbps");
  CHECK(diffs[1].chosen == 200);
  CHECK(diffs[1].runner_up == 20);
  CHECK(diffs[2].feature == "rx_mbps");
  CHECK(placement_differences(row, 1).size() == 1);

  WhyReport report{"wf-3", row, "succeeded", 5.25, diffs};
  Streams s;
  s.output(OutputMode::plain).placement_why(report);
  const std::string text = s.out.text();
  INFO(text);
  CHECK(text.find("task       fetch (attempt 2) of run wf-3\n") != std::string::npos);
  CHECK(text.find("placed on  n2 by network-aware\n") != std::string::npos);
  CHECK(text.find("basis      model m.json\n") != std::string::npos);
  CHECK(text.find("took       5.25 s (succeeded)\n") != std::string::npos);
  CHECK(text.find("candidates 3 (best first)\n") != std::string::npos);
  CHECK(text.find("no estimate") != std::string::npos);
  CHECK(text.find("what differs most: n2 vs n1\n") != std::string::npos);
  CHECK(text.find("  down_mbps                 200           20\n") != std::string::npos);

  Streams j;
  j.output(OutputMode::json).placement_why(report);
  const auto doc = nlohmann::json::parse(j.out.text());
  CHECK(doc["node"] == "n2");
  CHECK(doc["actual_s"] == 5.25);
  REQUIRE(doc["candidates"].size() == 3);
  CHECK(doc["candidates"][1]["predicted_s"] == 12.25);
  CHECK(doc["candidates"][2]["predicted_s"].is_null());
  CHECK(doc["candidates"][0]["features"]["down_mbps"] == 200);
  CHECK(doc["candidates"][0]["features"]["child_cpu"].is_null());
  CHECK(doc["candidates"][2]["features"].empty());
  CHECK(doc["differences"][1]["runner_up"] == 20);
}

}  // namespace chorus::cli
