// The pure pieces under the loader: ranges, products, member names and placeholders.
#include <doctest/doctest.h>

#include "support/workflow_parsing.hpp"
#include "workflows/placeholder.hpp"
#include "workflows/sweep.hpp"

using namespace chorus;
using chorus::test::contains;

TEST_CASE("Workflows.Sweep.RangeFollowsPythonSemantics") {
  CHECK(*expand_range("range(0, 3)", 100) == std::vector<std::string>{"0", "1", "2"});
  CHECK(*expand_range(" range( -2 ,2 , 2 ) ", 100) == std::vector<std::string>{"-2", "0"});
  CHECK(*expand_range("range(5, 0, -2)", 100) == std::vector<std::string>{"5", "3", "1"});
  CHECK(*expand_range("range(0, 10, 4)", 100) == std::vector<std::string>{"0", "4", "8"});
}

TEST_CASE("Workflows.Sweep.RangeErrors") {
  CHECK(contains(expand_range("range(3)", 100).status().message(), "needs 2 or 3 numbers"));
  CHECK(contains(expand_range("range(1, 2, 3, 4)", 100).status().message(), "needs 2 or 3"));
  CHECK(contains(expand_range("range 1, 2", 100).status().message(), "is not a range"));
  CHECK(contains(expand_range("rang(1, 2)", 100).status().message(), "is not a range"));
  CHECK(contains(expand_range("range(a, 2)", 100).status().message(), "whole numbers, got 'a'"));
  CHECK(contains(expand_range("range(1, )", 100).status().message(), "whole numbers, got ''"));
  CHECK(contains(expand_range("range(0, 99999999999999999999)", 100).status().message(),
                 "out of range"));
  CHECK(contains(expand_range("range(0, 101)", 100).status().message(),
                 "has 101 values, more than the limit of 100"));
}

TEST_CASE("Workflows.Sweep.HugeRangeIsRefusedWithoutAllocating") {
  // 2^64 - 1 values: counted exactly, refused before any allocation.
  auto r = expand_range("range(-9223372036854775808, 9223372036854775807)", 1'000'000);
  REQUIRE(!r.ok());
  CHECK(contains(r.status().message(), "18446744073709551615 values"));
  r = expand_range("range(9223372036854775807, -9223372036854775808, -9223372036854775808)", 10);
  REQUIRE(r.ok());
  CHECK(*r == std::vector<std::string>{"9223372036854775807", "-1"});
}

TEST_CASE("Workflows.Sweep.MembersInNestedLoopOrder") {
  std::vector<SweepVariable> vars{{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  CHECK(sweep_size(vars) == 6);
  CHECK(sweep_member(vars, 0) == KeyValues{{"a", "1"}, {"b", "x"}});
  CHECK(sweep_member(vars, 2) == KeyValues{{"a", "1"}, {"b", "z"}});
  CHECK(sweep_member(vars, 3) == KeyValues{{"a", "2"}, {"b", "x"}});
  CHECK(member_name("t", sweep_member(vars, 5)) == "t[a=2,b=z]");
}

TEST_CASE("Workflows.Sweep.SizeSaturates") {
  std::vector<std::string> big(1 << 16, "v");
  std::vector<SweepVariable> vars{{"a", big}, {"b", big}, {"c", big}, {"d", big}, {"e", big}};
  CHECK(sweep_size(vars) == ~std::uint64_t{0});
}

TEST_CASE("Workflows.Sweep.ValuesMustBeNameSafe") {
  CHECK(check_sweep_value("a.csv").ok());
  CHECK(check_sweep_value("-1").ok());
  CHECK(!check_sweep_value("").ok());
  for (const char* bad : {"a/b", "a[", "b]", "a,b", "a=b", "a\nb"}) {
    CHECK_MESSAGE(!check_sweep_value(bad).ok(), bad);
  }
}

TEST_CASE("Workflows.Placeholder.SubstitutesAndUnescapes") {
  const KeyValues vars{{"part", "3"}, {"name_2", "x"}};
  CHECK(*substitute_placeholders("out/{part}/{name_2}.txt", vars) == "out/3/x.txt");
  CHECK(*substitute_placeholders("{{part}} }}{{", vars) == "{part} }{");
  CHECK(*substitute_placeholders("{{{part}}}", vars) == "{3}");
  CHECK(*substitute_placeholders("no braces", vars) == "no braces");
  CHECK(substitute_placeholders("", vars)->empty());
}

TEST_CASE("Workflows.Placeholder.Errors") {
  const KeyValues vars{{"part", "3"}};
  CHECK(substitute_placeholders("{}", vars).status().message() ==
        "'{}' is not a placeholder (write '{{' and '}}' for literal braces)");
  CHECK(substitute_placeholders("{prat}", vars, "in the command").status().message() ==
        "unknown placeholder '{prat}' in the command (did you mean '{part}'? write '{{' and '}}' "
        "for literal braces)");
  CHECK(contains(substitute_placeholders("a{", vars).status().message(), "never closed"));
  CHECK(contains(substitute_placeholders("a}", vars).status().message(), "without a matching"));
  CHECK(contains(substitute_placeholders("{x}", {}).status().message(), "no foreach variables"));
}
