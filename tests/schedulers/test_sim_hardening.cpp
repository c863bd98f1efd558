// Workloads that once hung `chorus simulate` or were silently accepted (issue 12): each is refused
// with its place in the file, and no workload keeps the simulator running without end.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/sim/metrics.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_io.hpp"

using namespace chorus;
using namespace chorus::sim;

namespace {

std::string error_of(const Result<Workload>& w) {
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().code() == ErrorCode::invalid_argument);
  return w.status().message();
}

}  // namespace

TEST_CASE("Schedulers.SimHardening.CsvUnterminatedQuoteIsRefusedWithItsColumn") {
  CHECK(error_of(read_workload_csv("job,user,arrival,runtime\n\"j1,a,0,1\nj2,b,0,1\n", "w.csv")) ==
        "w.csv:2:1: unterminated quote in field 1 (column 'job') (a quoted field ends on its "
        "own line)");
  CHECK(error_of(read_workload_csv("job,user,arrival,runtime\nj1,\"a\"b,0,1\n", "w.csv")) ==
        "w.csv:2:7: text after the closing quote of field 2 (column 'user') (write \"\" for a "
        "quote inside it)");
  // Quoted fields as records_csv writes them are read back.
  auto ok = read_workload_csv("job,user,arrival,runtime\n\"j,1\",\"a \"\"x\"\"\",0,1\n", "w.csv");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->jobs[0].id == "j,1");
  CHECK(ok->jobs[0].user == "a \"x\"");
}

TEST_CASE("Schedulers.SimHardening.CsvNulBytesAreRefusedWithTheirPlace") {
  const std::string text = std::string("job,user,arrival,runtime\nj1,a\0b,0,1\n", 36);
  CHECK(error_of(read_workload_csv(text, "w.csv")) ==
        "w.csv:2:5: a NUL byte (offset 29); a workload CSV is text");
}

TEST_CASE("Schedulers.SimHardening.CsvDuplicatedColumnIsRefused") {
  CHECK(error_of(read_workload_csv("job,user,arrival,runtime,user\nj1,a,0,1,b\n", "w.csv")) ==
        "w.csv:1: column 'user' is named twice (columns 2 and 5)");
}

TEST_CASE("Schedulers.SimHardening.OverLargeNumbersAreRefusedAtTheirPlace") {
  CHECK(error_of(read_workload_csv("job,user,arrival,runtime\nj1,a,0,1e308\n", "w.csv")) ==
        "w.csv:2: runtime: 1e+308 s is out of range (runtimes are more than 0 and at most "
        "1e+09 s)");
  CHECK(error_of(read_workload_csv("job,user,arrival,runtime\nj1,a,0,inf\n", "w.csv")) ==
        "w.csv:2: runtime: inf s is out of range (runtimes are more than 0 and at most 1e+09 s)");
  CHECK(error_of(read_workload_csv("job,user,arrival,runtime,cores\nj1,a,0,1,1e300\n", "w.csv")) ==
        "w.csv:2: cores: 1e+300 is not a whole number of cores from 1 to 1048576");
  CHECK(
      error_of(read_workload_json(
          R"({"jobs": [{"id": "j", "user": "a", "arrival": 0, "tasks": [{"runtime": 1.7e308}]}]})",
          "w.json")) ==
      "w.json: jobs[0].tasks[0].runtime: 1.7e+308 s is out of range (runtimes are more than 0 "
      "and at most 1e+09 s)");
  CHECK(error_of(read_workload_json(
            R"({"jobs": [{"id": "j", "user": "a", "arrival": 2e9, "tasks": [{"runtime": 1}]}]})",
            "w.json")) ==
        "w.json: jobs[0].arrival: 2e+09 s is out of range (arrivals are 0 to "
        "1e+09 s)");
}

TEST_CASE("Schedulers.SimHardening.TaskCountsAreBoundedBeforeAllocating") {
  // Jobs of 10,000,000 tasks each, a few bytes apiece, would need 640 MB per job: the workload's
  // 10,000,000 tasks in all are counted before any job's tasks are allocated.
  const std::string text =
      R"([{"id": "j1", "user": "a", "arrival": 0, "tasks": [{"runtime": 1}]},)"
      R"( {"id": "j2", "user": "a", "arrival": 0, "tasks": {"count": 10000000, "runtime": 1}}])";
  CHECK(error_of(read_workload_json(text, "w.json")) ==
        "w.json: jobs[1].tasks.count: 10000000 tasks would give the workload more than 10000000 "
        "tasks");
}

TEST_CASE("Schedulers.SimHardening.RuntimesPastTheClockEndTheRunWithAnError") {
  // Ten chained tasks of 1e9 s each: 1e10 s, past the 9.2e9 s an int64 of nanoseconds holds.
  Workload w;
  SimJob j;
  j.id = "long";
  j.user = "a";
  for (std::uint32_t k = 0; k < 10; ++k) {
    SimTask t{1e9, 1, {}, {}};
    if (k > 0) t.after = {k - 1};
    j.tasks.push_back(t);
  }
  w.jobs = {j};
  auto cluster = parse_cluster("1x1");
  REQUIRE(cluster.ok());
  auto q = PolicyRegistry::with_builtins().make_queue("uwfq");
  REQUIRE(q.ok());
  FirstFit ff;
  auto r = simulate(w, *cluster, **q, ff);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "the simulation passes 9223372036 s (292 years) of simulated time at the end of job "
        "'long' task 9: the workload's runtimes and arrivals add up to more than the "
        "simulator's clock holds");
  // A direct caller's workload with a non-finite runtime is refused, not simulated.
  w.jobs[0].tasks[0].runtime_s = std::numeric_limits<double>::infinity();
  CHECK_FALSE(simulate(w, *cluster, **q, ff).ok());
}

TEST_CASE("Schedulers.SimHardening.IdealScheduleEndsWithWeightsFarApart") {
  // Weights 1e-300 and 1: subtracting one from their sum once left head_left NaN and the loop of
  // ideal_finish_times endless.
  SimResult run;
  for (int i = 0; i < 4; ++i) {
    JobRecord rec;
    rec.id = "j" + std::to_string(i);
    rec.user = i % 2 == 0 ? "tiny" : "big";
    rec.arrival_s = i;
    rec.work = 1e9;
    rec.alone_s = 1e9;
    rec.finish_s = 5e9;
    rec.start_s = i;
    rec.tasks = 1;
    run.jobs.push_back(rec);
  }
  const auto finish = ideal_finish_times(run.jobs, 4, {{"tiny", 1e-300}, {"big", 1}});
  REQUIRE(finish.size() == 4);
  for (double f : finish) CHECK(std::isfinite(f));
}
