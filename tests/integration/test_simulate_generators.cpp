// `chorus simulate --workload gen:bursty|gen:zipf --gen-params ...`: the generators' parameters
// reach the workload, bad ones are refused with what was wrong, and the fairness measure for
// unequal demands is printed beside Jain.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("Integration.SimulateGenerators.ParametersShapeTheWorkloadOrAreRefused") {
  TempDir dir;
  auto jobs_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"simulate", "--workload", "gen:zipf",
                                     "--queue",  "uwfq",       "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto run = run_chorus(args, dir.path());
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    auto j = nlohmann::json::parse(run.out);
    CHECK(j["uwfq"]["fair_attainment_jain"].get<double>() > 0);
    CHECK(j["uwfq"]["fair_attainment_min"].get<double>() <= 1);
    CHECK(j["uwfq"]["small_mean_alone_s"].get<double>() > 0);
    return j["uwfq"]["jobs"].get<int>();
  };
  CHECK(jobs_of({}) == 600);
  CHECK(jobs_of({"--gen-params", "jobs=150,users=5"}) == 150);

  auto refused = [&](std::vector<std::string> args, const std::string& message) {
    auto run = run_chorus(args, dir.path());
    CHECK(run.exit_code == 2);
    CHECK_MESSAGE(run.err.find(message) != std::string::npos, run.err);
  };
  refused({"simulate", "--workload", "gen:bursty", "--gen-params", "heavyy=2"},
          "generator 'bursty' takes no parameter 'heavyy' (did you mean 'heavy'?)");
  refused({"simulate", "--workload", "gen:bursty", "--gen-params", "gap_min=90"},
          "gap_min (90) is above gap_max (70)");
  refused({"simulate", "--workload", "gen:zipf", "--gen-params", "s"},
          "--gen-params: 's' is not KEY=NUMBER");
  refused({"simulate", "--workload", "gen:zipf", "--gen-params", "s=1,s=2"},
          "--gen-params: 's' is given twice");
  refused({"simulate", "--workload", "gen:2large2small", "--gen-params", "heavy=1"},
          "generator '2large2small' takes no parameters (bursty and zipf do)");
  refused({"simulate", "--workload", "wf.yaml", "--gen-params", "heavy=1"},
          "--gen-params: the workload is not a generator (gen:MIX)");
}
