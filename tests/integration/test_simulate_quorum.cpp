// `chorus simulate-quorum` through the real binary: the table and --json, a --compare list with
// options and a range, the trace file, and bad input refused with exit status 2 and what to fix.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// A small problem so the runs take well under a second.
std::vector<std::string> small(std::vector<std::string> extra) {
  std::vector<std::string> args = {"simulate-quorum",
                                   "--dim",
                                   "20",
                                   "--samples",
                                   "2000",
                                   "--n",
                                   "8",
                                   "--batch",
                                   "16",
                                   "--lr",
                                   "0.2",
                                   "--max-iterations",
                                   "400"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("Integration.SimulateQuorum.ComparesPoliciesOnTheSameDelays") {
  TempDir dir;
  auto run = run_chorus(small({"--scenario", "S2", "--compare", "wait-all,static:b=0..2,static:k=2",
                               "--seeds", "3", "--json", "--trace-out", "trace.csv"}),
                        dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto j = nlohmann::json::parse(run.out);
  CHECK(j["scenario"] == "S2 pareto");
  CHECK(j["n"] == 8);
  CHECK(j["target_loss"].get<double>() > j["optimum_loss"].get<double>());
  CHECK(j["target_loss"].get<double>() < j["initial_loss"].get<double>());
  const auto& p = j["policies"];
  REQUIRE(p.size() == 5);
  CHECK(p[0]["policy"] == "wait-all");
  CHECK(p[1]["policy"] == "static:b=0");
  CHECK(p[3]["policy"] == "static:b=2");
  CHECK(p[4]["policy"] == "static:k=2");
  // wait-all and b = 0 are the same rule: the same times, seed by seed.
  CHECK(p[0]["times_s"] == p[1]["times_s"]);
  CHECK(p[0]["median_mean_k"] == 8.0);
  CHECK(p[3]["median_mean_k"] == 6.0);
  CHECK(p[0]["reached"] == 3);
  // Under a heavy tail, dropping 2 of 8 is faster than waiting for all.
  CHECK(p[3]["median_time_s"].get<double>() < p[0]["median_time_s"].get<double>());
  const auto lines = read_lines(dir.path() + "/trace.csv");
  REQUIRE(lines.size() > 5);
  CHECK(lines[0] == "policy,seed,round,time_s,loss,k");
  CHECK(lines[1].rfind("\"wait-all\",1,1,", 0) == 0);

  auto table = run_chorus(small({"--compare", "wait-all,static:b=4"}), dir.path());
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("static:b=4") != std::string::npos);
  CHECK(table.out.find("target loss") != std::string::npos);
}

TEST_CASE("Integration.SimulateQuorum.BadInputIsRefused") {
  TempDir dir;
  auto refused = [&](std::vector<std::string> args, const std::string& message) {
    auto run = run_chorus(small(args), dir.path());
    CHECK(run.exit_code == 2);
    CHECK_MESSAGE(run.err.find(message) != std::string::npos, run.err);
  };
  refused({"--compare", "wait-all,statik:b=2"},
          "--compare: unknown quorum policy 'statik' (did you mean 'static'?)");
  refused({"--compare", "static:k=9"}, "static:k=9: k 9 is above the 8 workers (--n)");
  refused({"--compare", "static:b=8"}, "b goes from 0 to 7");
  refused({"--compare", "static:b=x"}, "'b' must be a number");
  refused({"--compare", "static:b"}, "is not KEY=VALUE");
  refused({"--scenario", "S9"}, "--scenario: unknown scenario 'S9'");
  refused({"--mode", "lazy"}, "--mode: unknown mode 'lazy'; known: interrupt, timed");
  refused({"--workload", "logistc"}, "unknown workload 'logistc' (did you mean 'logistic'?)");
  refused({"--workload", "digits", "--digits", dir.path() + "/none.csv"}, "none.csv");
  refused({"--workload", "digits", "--digits", dir.path() + "/none.csv"},
          "scripts/fetch_digits.sh");
  auto zero = run_chorus({"simulate-quorum", "--n", "0"}, dir.path());
  CHECK(zero.exit_code == 2);
  CHECK_MESSAGE(zero.err.find("--n: at least 1 worker") != std::string::npos, zero.err);
}
