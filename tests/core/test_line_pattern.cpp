// LinePattern (core/line_pattern): RE2 behind our wrapper — what it finds, what it refuses and
// in which words, and that a megabyte line costs no recursion (std::regex overflowed the stack).
#include <doctest/doctest.h>

#include <string>

#include "core/line_pattern.hpp"

using chorus::LinePattern;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string refusal(const std::string& pattern) {
  auto p = LinePattern::compile(pattern);
  REQUIRE(!p.ok());
  CHECK(p.status().code() == chorus::ErrorCode::invalid_argument);
  return p.status().message();
}

}  // namespace

TEST_CASE("Core.LinePattern.SearchGivesTheFirstCaptureOrTheWholeMatch") {
  auto with_group = LinePattern::compile(R"(listening on (\S+))");
  REQUIRE(with_group.ok());
  CHECK(with_group->search("INFO listening on 127.0.0.1:8080 now") == "127.0.0.1:8080");
  CHECK(!with_group->search("listening soon").has_value());
  auto plain = LinePattern::compile("^ready");
  REQUIRE(plain.ok());
  CHECK(plain->search("ready to serve") == "ready");
  CHECK(!plain->search("not ready").has_value());
  // An optional group that took no part: the whole match is the answer.
  auto optional_group = LinePattern::compile("up( at \\S+)?");
  REQUIRE(optional_group.ok());
  CHECK(optional_group->search("up") == "up");
}

TEST_CASE("Core.LinePattern.RefusalsSayRE2AndWhatItLacks") {
  const std::string broken = refusal("ready (");
  CHECK(contains(broken,
                 "'ready (' is not a valid regular expression (RE2 syntax: no "
                 "backreferences or lookaround): missing ): ready ("));
  CHECK(contains(refusal(R"((a)\1)"), "no backreferences or lookaround"));
  CHECK(contains(refusal("ready(?=now)"), "no backreferences or lookaround"));
}

TEST_CASE("Core.LinePattern.APatternPastTheCapIsRefusedAndQuotedShort") {
  const std::string huge(100'000, 'a');
  const std::string m = refusal(huge);
  CHECK(contains(m,
                 "(100000 bytes) is longer than the 4096 bytes a ready pattern may "
                 "have"));
  CHECK(m.size() < 200);
  CHECK(LinePattern::compile(std::string(LinePattern::kMaxPatternBytes, 'a')).ok());
  // The quote is cut on a character boundary: "é" is two bytes, the 60th byte starts one.
  std::string accents = std::string(59, 'a');
  for (int i = 0; i < 3000; ++i) accents += "\xC3\xA9";
  CHECK(contains(refusal(accents), "'" + std::string(59, 'a') + "...' (6059 bytes)"));
}

TEST_CASE("Core.LinePattern.AMegabyteLineIsSearchedWithoutRecursion") {
  // std::regex recursed once per character of `.*` here and overflowed the stack.
  const std::string line = "ready" + std::string(1 << 20, 'x');
  auto greedy = LinePattern::compile("ready.*");
  REQUIRE(greedy.ok());
  auto found = greedy->search(line);
  REQUIRE(found.has_value());
  CHECK(found->size() == line.size());
  auto anchored_end = LinePattern::compile("(x+)$");
  REQUIRE(anchored_end.ok());
  CHECK(anchored_end->search(line)->size() == (1u << 20));
}

TEST_CASE("Core.LinePattern.APatternNeedingTooMuchMemoryIsRefused") {
  // Short, but compiles to a program of millions of instructions (a letter is a large UTF-8
  // class): RE2 stops at max_mem instead of using what it would take.
  std::string pattern;
  for (int i = 0; i < 8; ++i) pattern += "(\\pL{1000})";
  const std::string m = refusal(pattern);
  CHECK(contains(m, "pattern too large - compile failed (it needs more than 8 MiB to match)"));
}
