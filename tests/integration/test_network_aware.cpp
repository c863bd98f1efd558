// Network-aware placement end to end on the local backend: a workflow with `sources:` and
// `data:` runs under `placement: network-aware` (no telemetry here: the basis says so and the run
// succeeds), `chorus why` explains each attempt from the journal, a resumed run keeps journaling,
// and bad input (an undeclared source, a model file that does not load) is refused up front.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr const char* kWorkflow = R"Y(name: netaware
sources:
  store1: {address: "127.0.0.1:9", probe: connect}
  sink: {address: "127.0.0.1:9", probe: none}
scheduler: {placement: network-aware, max_age: 20s}
defaults:
  data: {from: store1}
tasks:
  - name: fetch
    command: "echo fetched > fetched.txt"
    data: {input: 64MB, output: 16MB, to: sink, cpu: 1s}
  - name: flaky
    command: "if test -f again; then exit 0; fi; touch again; exit 1"
    data: {input: 1M}
    after: [fetch]
  - name: report
    command: [/bin/true]
    after: [flaky]
)Y";

}  // namespace

TEST_CASE("Integration.NetworkAware.LocalRunIsExplainedAndResumes") {
  TempDir dir;
  write_file(dir / "wf.yaml", kWorkflow);
  auto v = run_chorus({"validate", "wf.yaml"}, dir.path());
  INFO(v.err);
  REQUIRE(v.exit_code == 0);

  // First run: fetch succeeds, flaky fails its first attempt.
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 1);
  REQUIRE(file_exists(dir / "fetched.txt"));

  auto why = run_chorus({"why", "latest", "fetch"}, dir.path());
  INFO(why.out << why.err);
  REQUIRE(why.exit_code == 0);
  CHECK(has(why.out, "task       fetch (attempt 1) of run netaware-1"));
  CHECK(has(why.out, "by network-aware"));
  CHECK(has(why.out, "basis      fallback least-allocated (no telemetry)"));
  CHECK(has(why.out, "(succeeded)"));
  CHECK(has(why.out, "candidates 1 (best first)"));

  auto json = run_chorus({"why", "latest", "fetch", "--json"}, dir.path());
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["task"] == "fetch");
  CHECK(j["policy"] == "network-aware");
  CHECK(j["outcome"] == "succeeded");
  CHECK(j["actual_s"].get<double>() >= 0);
  REQUIRE(j["candidates"].size() == 1);
  CHECK(j["candidates"][0]["predicted_s"].is_null());  // no estimate without telemetry
  CHECK(j["candidates"][0]["features"]["input_mb"] == 64);
  CHECK(j["candidates"][0]["features"]["output_mb"] == 16);
  CHECK(j["candidates"][0]["features"]["cpu_s"] == 1);
  CHECK(j["candidates"][0]["features"]["down_mbps"].is_null());
  CHECK(j["candidates"][0]["features"]["telemetry_age_s"].is_null());

  auto failed = run_chorus({"why", "latest", "flaky", "--json"}, dir.path());
  REQUIRE(failed.exit_code == 0);
  CHECK(nlohmann::json::parse(failed.out)["outcome"] == "failed");
  // report never ran: nothing to explain, and the error says so.
  auto unplaced = run_chorus({"why", "latest", "report"}, dir.path());
  CHECK(unplaced.exit_code == 2);
  CHECK_MESSAGE((has(unplaced.err, "was never placed") ||
                 has(unplaced.err, "has not been placed yet (still pending)")),
                unplaced.err);

  // Resume: flaky's second attempt succeeds and is explained too; the first still is.
  auto resumed = run_chorus({"run", "wf.yaml", "--resume"}, dir.path());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  auto second = run_chorus({"why", "netaware-1", "flaky", "--json"}, dir.path());
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  const auto s = nlohmann::json::parse(second.out);
  CHECK(s["attempt"] == 2);
  CHECK(s["outcome"] == "succeeded");
  auto first = run_chorus({"why", "netaware-1", "flaky", "--attempt", "1"}, dir.path());
  CHECK(first.exit_code == 0);
  CHECK(has(first.out, "(failed)"));

  // Clear errors.
  auto none = run_chorus({"why", "latest", "fetc"}, dir.path());
  CHECK(none.exit_code == 2);
  CHECK(
      has(none.err, "run 'netaware-1' has no task 'fetc' in its journal (did you mean 'fetch'?)"));
  auto attempt = run_chorus({"why", "latest", "fetch", "--attempt", "3"}, dir.path());
  CHECK(attempt.exit_code == 2);
  CHECK(has(attempt.err, "has no attempt 3"));
  auto run = run_chorus({"why", "nosuchrun", "fetch"}, dir.path());
  CHECK(run.exit_code == 2);
}

TEST_CASE("Integration.NetworkAware.OtherPoliciesAndBadInput") {
  TempDir dir;
  write_file(dir / "ff.yaml", R"Y(name: plain
tasks:
  - name: a
    command: [/bin/true]
)Y");
  REQUIRE(run_chorus({"run", "ff.yaml"}, dir.path()).exit_code == 0);
  auto why = run_chorus({"why", "latest", "a"}, dir.path());
  CHECK(why.exit_code == 2);
  CHECK_MESSAGE(has(why.err,
                    "was placed by first-fit: chorus why explains network-aware "
                    "decisions only"),
                why.err);

  write_file(dir / "undeclared.yaml", R"Y(name: undeclared
sources: {store1: {address: "127.0.0.1:9"}}
tasks:
  - name: a
    command: [/bin/true]
    data: {input: 1M, from: stor1}
)Y");
  auto v = run_chorus({"validate", "undeclared.yaml"}, dir.path());
  CHECK(v.exit_code == 2);
  CHECK_MESSAGE(has(v.err,
                    "undeclared.yaml:6:29: 'data.from' in task 'a' names an undeclared "
                    "source 'stor1' (did you mean 'store1'?); declared: store1"),
                v.err);

  write_file(dir / "nomodel.yaml", R"Y(name: nomodel
scheduler: {placement: network-aware, model: missing-model.json}
tasks:
  - name: a
    command: "touch ran"
)Y");
  auto m = run_chorus({"run", "nomodel.yaml"}, dir.path());
  CHECK(m.exit_code == 2);
  CHECK_MESSAGE(has(m.err, "missing-model.json"), m.err);
  CHECK_MESSAGE(has(m.err, "nomodel.yaml:2:46"), m.err);
  CHECK_FALSE(file_exists(dir / "ran"));
}
