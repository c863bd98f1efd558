// Job weights live: `job: {name, weight}` in a workflow file reaches the uwfq queue of `chorus
// run`, and a user's heavier job is served before an equal lighter one.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// One user, two equal jobs of 4 one-core tasks: `light` listed (and submitted) first, then
// `heavy`. `light_job` and `heavy_job` are the `job:` values. One core, so tasks start one at a
// time in the queue's order; returns the jobs' names in start order.
std::vector<std::string> start_order(const std::string& light_job, const std::string& heavy_job) {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: weighted
user: alice
scheduler: {queue: uwfq}
tasks:
  - name: light
    foreach: {i: "range(0, 4)"}
    command: "echo light >> starts.log; sleep 0.01"
    estimate: 1s
    job: )Y" + light_job + R"Y(
  - name: heavy
    foreach: {i: "range(0, 4)"}
    command: "echo heavy >> starts.log; sleep 0.01"
    estimate: 1s
    job: )Y" + heavy_job + "\n");
  auto r = run_chorus({"run", "wf.yaml", "--cores", "1"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return read_lines(dir / "starts.log");
}

const std::vector<std::string> kLightFirst = {"light", "light", "light", "light",
                                              "heavy", "heavy", "heavy", "heavy"};
const std::vector<std::string> kHeavyFirst = {"heavy", "heavy", "heavy", "heavy",
                                              "light", "light", "light", "light"};

}  // namespace

TEST_CASE("Integration.JobWeights.EqualJobsRunInSubmissionOrder") {
  CHECK(start_order("{name: light}", "{name: heavy}") == kLightFirst);
}

TEST_CASE("Integration.JobWeights.AHeavierJobOfTheSameUserIsServedFirst") {
  CHECK(start_order("{name: light}", "{name: heavy, weight: 2}") == kHeavyFirst);
  // Weights are relative: the lighter job halved does the same.
  CHECK(start_order("{name: light, weight: 0.5}", "heavy") == kHeavyFirst);
}

TEST_CASE("Integration.JobWeights.ABadWeightIsALocatedError") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "tasks:\n  - {name: a, command: [true], job: {name: j, weight: -2}}\n");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("wf.yaml:2:55: 'job.weight' in task 'a' must be a positive number") !=
        std::string::npos);
}
