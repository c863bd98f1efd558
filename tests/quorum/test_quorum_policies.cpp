// The quorum policies' contract (schedulers/quorum/quorum_policy.hpp) and the registry's quorum
// table: names, options and their located errors.
#include <vector>

#include <doctest/doctest.h>

#include "schedulers/policy_registry.hpp"

namespace chorus {
namespace {

// The number of arrivals (at times 1, 2, ..., n) after which `policy` closes a round of n.
int closes_after(QuorumPolicy& policy, int n, int round = 1) {
  policy.begin({.round = round, .n = n, .time = 0});
  int k = n;
  for (int i = 1; i <= n; ++i) {
    if (policy.on_arrival({.worker = i - 1, .time = double(i), .received = i}) ==
        QuorumVerdict::close) {
      k = i;
      break;
    }
  }
  std::vector<double> arrivals(n, kNever);
  for (int i = 0; i < k; ++i) arrivals[i] = i + 1;
  policy.end({.round = round, .start = 0, .closed_at = double(k), .used = k, .arrivals = arrivals});
  return k;
}

PolicyOptions one_option(const std::string& key, const std::string& value) {
  PolicyOptions o;
  o.entries.push_back(
      {key, {"wf.yaml", 3, 20}, {OptionValue::Kind::scalar, value, {}, {"wf.yaml", 3, 23}}, {}});
  return o;
}

TEST_CASE("Quorum.Policies.WaitAllAndStaticCloseWhereTheySay") {
  const auto registry = PolicyRegistry::with_builtins();
  auto all = registry.make_quorum("wait-all");
  REQUIRE(all.ok());
  CHECK(closes_after(**all, 8) == 8);

  auto k5 = registry.make_quorum("static", one_option("k", "5"));
  REQUIRE(k5.ok());
  CHECK(closes_after(**k5, 8) == 5);
  CHECK(closes_after(**k5, 3) == 3);  // k above n: all n

  auto b2 = registry.make_quorum("static", one_option("b", "2"));
  REQUIRE(b2.ok());
  CHECK(closes_after(**b2, 8) == 6);
  CHECK(closes_after(**b2, 16) == 14);
}

TEST_CASE("Quorum.Registry.RefusesUnknownNamesAndBadOptionsWithTheirPlace") {
  const auto registry = PolicyRegistry::with_builtins();
  auto unknown = registry.make_quorum("statik", {}, {}, {"wf.yaml", 4, 13});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == ErrorCode::not_found);
  CHECK(unknown.status().message().find(
            "wf.yaml:4:13: unknown quorum policy 'statik' (did you mean 'static'?)") == 0);

  auto issues = registry.check_quorum("static", {"wf.yaml", 4, 13}, one_option("k", "0"));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].at.format() == "wf.yaml:3:23");
  CHECK(issues[0].message.find(
            "'k' of quorum policy 'static' must be a whole number of 1 or more") == 0);

  issues = registry.check_quorum("wait-all", {"wf.yaml", 4, 13}, one_option("k", "3"));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].message.find("quorum policy 'wait-all' takes no option 'k' (static does)") == 0);

  issues = registry.check_quorum("static", {"wf.yaml", 4, 13}, {});
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].at.format() == "wf.yaml:4:13");
}

}  // namespace
}  // namespace chorus
