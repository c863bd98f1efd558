// Slurm's hostlist and CPU-list syntaxes, the allocation read from SLURM_* variables, and time
// limits: pure parsing, no cluster (the real-cluster tests are in tests/slurm/).
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "adapters/slurm/allocation.hpp"
#include "adapters/slurm/cpus_per_node.hpp"
#include "adapters/slurm/hostlist.hpp"
#include "adapters/slurm/slurm_client.hpp"

using chorus::compress_hostlist;
using chorus::expand_hostlist;
using chorus::parse_cpus_per_node;
using Hosts = std::vector<std::string>;

namespace {

Hosts expand_ok(const std::string& expression) {
  auto r = expand_hostlist(expression);
  INFO(expression, ": ", r.status().message());
  REQUIRE(r.ok());
  return *r;
}

std::string expand_error(const std::string& expression, std::size_t max_hosts = 1'000'000) {
  auto r = expand_hostlist(expression, max_hosts);
  INFO(expression);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == chorus::ErrorCode::invalid_argument);
  return r.status().message();
}

chorus::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("Adapters.SlurmHostlist.ExpandsRangesListsAndPadding") {
  CHECK(expand_ok("n1") == Hosts{"n1"});
  CHECK(expand_ok("n[1-3,7]") == Hosts{"n1", "n2", "n3", "n7"});
  CHECK(expand_ok("a[01-10]b") ==
        Hosts{"a01b", "a02b", "a03b", "a04b", "a05b", "a06b", "a07b", "a08b", "a09b", "a10b"});
  CHECK(expand_ok("x1,y[2-3]") == Hosts{"x1", "y2", "y3"});
  CHECK(expand_ok("n[8-11]") == Hosts{"n8", "n9", "n10", "n11"});
  CHECK(expand_ok("n[098-101]") == Hosts{"n098", "n099", "n100", "n101"});
  CHECK(expand_ok("r[1-2]n[1-2]") == Hosts{"r1n1", "r1n2", "r2n1", "r2n2"});
  CHECK(expand_ok("gpu-[3],cpu[5-5]") == Hosts{"gpu-3", "cpu5"});
  CHECK(expand_ok("node-a,node-b") == Hosts{"node-a", "node-b"});
}

TEST_CASE("Adapters.SlurmHostlist.RejectsMalformedExpressions") {
  CHECK(expand_error("n[1-3").find("'[' without ']'") != std::string::npos);
  CHECK(expand_error("n1-3]").find("']' without '['") != std::string::npos);
  CHECK(expand_error("n[1-[2]]").find("nested") != std::string::npos);
  CHECK(expand_error("n[]").find("empty range") != std::string::npos);
  CHECK(expand_error("n[1,,2]").find("empty range") != std::string::npos);
  CHECK(expand_error("n[a-b]").find("not a number") != std::string::npos);
  CHECK(expand_error("n[1-]").find("not a number") != std::string::npos);
  CHECK(expand_error("n[5-3]").find("ends below its start") != std::string::npos);
  CHECK(expand_error("n1,,n2").find("empty host name") != std::string::npos);
  CHECK(expand_error("").find("empty host name") != std::string::npos);
  CHECK(expand_error("n[1-5]", 4).find("more than 4 hosts") != std::string::npos);
  CHECK(expand_error("n[1-2]m[1-3]", 5).find("more than 5 hosts") != std::string::npos);
  CHECK(expand_error("n[1-999999999999]").find("more than") != std::string::npos);
  // The message quotes the expression so a user can find it.
  CHECK(expand_error("n[5-3]").find("'n[5-3]'") != std::string::npos);
}

TEST_CASE("Adapters.SlurmHostlist.CompressesRuns") {
  CHECK(compress_hostlist({}) == "");
  CHECK(compress_hostlist({"n1"}) == "n1");
  CHECK(compress_hostlist({"n1", "n2", "n3", "n7"}) == "n[1-3,7]");
  CHECK(compress_hostlist({"n09", "n10", "n11"}) == "n[09-11]");
  CHECK(compress_hostlist({"n9", "n10"}) == "n[9-10]");
  CHECK(compress_hostlist({"n1", "n01"}) == "n[1,01]");
  CHECK(compress_hostlist({"x1", "y2", "y3"}) == "x1,y[2-3]");
  CHECK(compress_hostlist({"login", "n1", "n2"}) == "login,n[1-2]");
  CHECK(compress_hostlist({"n3", "n1", "n2"}) == "n[3,1-2]");
}

TEST_CASE("Adapters.SlurmHostlist.CompressThenExpandRoundTrips") {
  std::mt19937 rng(42);
  const std::vector<std::string> prefixes{"n", "gpu-", "r1n", "x"};
  for (int round = 0; round < 300; ++round) {
    Hosts hosts;
    int count = std::uniform_int_distribution<int>(1, 20)(rng);
    for (int i = 0; i < count; ++i) {
      std::string name = prefixes[rng() % prefixes.size()];
      int number = std::uniform_int_distribution<int>(0, 120)(rng);
      std::string digits = std::to_string(number);
      if (rng() % 3 == 0 && digits.size() < 3) digits.insert(0, 3 - digits.size(), '0');
      hosts.push_back(rng() % 10 == 0 ? name + "head" : name + digits);
    }
    std::string compressed = compress_hostlist(hosts);
    INFO(compressed);
    CHECK(expand_ok(compressed) == hosts);
  }
}

TEST_CASE("Adapters.SlurmCpus.ExpandsRepeats") {
  auto r = parse_cpus_per_node("4(x3),2");
  REQUIRE(r.ok());
  CHECK(*r == std::vector<int>{4, 4, 4, 2});
  CHECK(*parse_cpus_per_node("16") == std::vector<int>{16});
  CHECK(*parse_cpus_per_node("1(x2)") == std::vector<int>{1, 1});
  CHECK(*parse_cpus_per_node("2,8(x1),3(x2)") == std::vector<int>{2, 8, 3, 3});
}

TEST_CASE("Adapters.SlurmCpus.RejectsMalformedLists") {
  for (const char* bad : {"", "4,", ",4", "4(x0)", "4(x)", "4(3)", "4x3", "4(x3", "a", "0", "-2",
                          "4(x3)5", "4(x-1)"}) {
    auto r = parse_cpus_per_node(bad);
    INFO("'", bad, "'");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == chorus::ErrorCode::invalid_argument);
    CHECK(r.status().message().find(std::string("'") + bad + "'") != std::string::npos);
  }
  CHECK_FALSE(parse_cpus_per_node("4(x1000000)", 10).ok());
}

TEST_CASE("Adapters.SlurmAllocation.ReadsNodesAndCpus") {
  auto a = chorus::read_slurm_allocation(env_of({{"SLURM_JOB_ID", "4242"},
                                                 {"SLURM_JOB_NODELIST", "n[1-3,7]"},
                                                 {"SLURM_JOB_CPUS_PER_NODE", "4(x3),2"},
                                                 {"SLURM_MEM_PER_CPU", "256"}}));
  INFO(a.status().message());
  REQUIRE(a.ok());
  CHECK(a->job_id == "4242");
  CHECK(a->nodelist == "n[1-3,7]");
  REQUIRE(a->nodes.size() == 4);
  CHECK(a->nodes[0].name == "n1");
  CHECK(a->nodes[0].capacity.cores == 4);
  CHECK(a->nodes[0].capacity.memory_mb == 1024);
  CHECK(a->nodes[3].name == "n7");
  CHECK(a->nodes[3].capacity.cores == 2);
  CHECK(a->nodes[3].capacity.memory_mb == 512);

  auto per_node = chorus::read_slurm_allocation(env_of({{"SLURM_JOB_ID", "1"},
                                                        {"SLURM_JOB_NODELIST", "a01b"},
                                                        {"SLURM_JOB_CPUS_PER_NODE", "8"},
                                                        {"SLURM_MEM_PER_NODE", "4000"}}));
  REQUIRE(per_node.ok());
  CHECK(per_node->nodes[0].capacity.memory_mb == 4000);
  auto untracked = chorus::read_slurm_allocation(env_of(
      {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "x"}, {"SLURM_JOB_CPUS_PER_NODE", "8"}}));
  REQUIRE(untracked.ok());
  CHECK(untracked->nodes[0].capacity.memory_mb == 0);
}

TEST_CASE("Adapters.SlurmAllocation.MalformedVariablesNameVariableAndValue") {
  std::map<std::string, std::string> good{{"SLURM_JOB_ID", "7"},
                                          {"SLURM_JOB_NODELIST", "n[1-2]"},
                                          {"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}};
  auto error_with = [&](const std::string& name, std::optional<std::string> value) {
    auto vars = good;
    if (value) {
      vars[name] = *value;
    } else {
      vars.erase(name);
    }
    auto a = chorus::read_slurm_allocation(env_of(vars));
    REQUIRE_FALSE(a.ok());
    CHECK(a.status().code() == chorus::ErrorCode::invalid_argument);
    return a.status().message();
  };
  CHECK(error_with("SLURM_JOB_ID", std::nullopt).find("not inside a Slurm allocation") !=
        std::string::npos);
  CHECK(error_with("SLURM_JOB_ID", "12x").find("SLURM_JOB_ID='12x'") != std::string::npos);
  CHECK(error_with("SLURM_JOB_ID", "0").find("SLURM_JOB_ID='0'") != std::string::npos);
  CHECK(error_with("SLURM_JOB_NODELIST", std::nullopt).find("SLURM_JOB_NODELIST is not set") !=
        std::string::npos);
  CHECK(error_with("SLURM_JOB_NODELIST", "n[1-2").find("SLURM_JOB_NODELIST='n[1-2'") !=
        std::string::npos);
  CHECK(error_with("SLURM_JOB_CPUS_PER_NODE", "4(x2").find("SLURM_JOB_CPUS_PER_NODE='4(x2'") !=
        std::string::npos);
  CHECK(error_with("SLURM_JOB_CPUS_PER_NODE", std::nullopt)
            .find("SLURM_JOB_CPUS_PER_NODE is not set") != std::string::npos);
  std::string mismatch = error_with("SLURM_JOB_CPUS_PER_NODE", "4(x3)");
  CHECK(mismatch.find("names 2 nodes") != std::string::npos);
  CHECK(mismatch.find("for 3") != std::string::npos);
  auto vars = good;
  vars["SLURM_MEM_PER_NODE"] = "4G";
  auto a = chorus::read_slurm_allocation(env_of(vars));
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().message().find("SLURM_MEM_PER_NODE='4G'") != std::string::npos);
}

TEST_CASE("Adapters.SlurmTimeLimit.ParsesSlurmForms") {
  auto minutes = [](const char* text) {
    auto r = chorus::parse_slurm_time_limit(text);
    INFO(text, ": ", r.status().message());
    REQUIRE(r.ok());
    return *r;
  };
  CHECK(minutes("30") == 30);
  CHECK(minutes("30:00") == 30);
  CHECK(minutes("30:01") == 31);  // seconds round up
  CHECK(minutes("1:00:00") == 60);
  CHECK(minutes("2-0") == 2 * 24 * 60);
  CHECK(minutes("1-2:30") == 24 * 60 + 2 * 60 + 30);
  CHECK(minutes("1-0:0:30") == 24 * 60 + 1);
  CHECK(minutes("UNLIMITED") == chorus::kSlurmUnlimited);
  for (const char* bad : {"", "abc", "1:2:3:4", "-5", "1-", "0", "0:00", "5:x", "1--2"}) {
    INFO("'", bad, "'");
    CHECK_FALSE(chorus::parse_slurm_time_limit(bad).ok());
  }
}
