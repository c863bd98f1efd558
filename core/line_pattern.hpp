// LinePattern: a regular expression searched in one line of text at a time (a service's
// `ready: {stdout: ...}` probe). The only user of RE2 in Chorus.
//
// Why RE2 and not std::regex: libstdc++'s std::regex recurses once per character of the subject
// and of the pattern, so a long line or a long pattern overflows the stack (SIGSEGV). RE2 matches
// in time linear in the line, with no recursion over it, and bounds its own memory.
//
// Syntax is RE2's (https://github.com/google/re2/wiki/Syntax): Perl-like classes, groups,
// alternation, repetition, \d \s \w \b; no backreferences (\1) and no lookaround ((?=...),
// (?!...), (?<=...)). Patterns are limited to kMaxPatternBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace re2 {
class RE2;
}

namespace chorus {

class LinePattern {
 public:
  // Longest pattern accepted. Readiness patterns are a few dozen characters; the cap keeps a
  // pathological input from costing compile time and memory.
  static constexpr std::size_t kMaxPatternBytes = 4096;
  // Memory RE2 may use for one compiled pattern (its automata); a pattern needing more is refused.
  static constexpr std::int64_t kMaxMemoryBytes = 8 << 20;

  // The compiled pattern, or invalid_argument with a message naming the problem (no location:
  // the caller knows where the pattern came from and prefixes it).
  static Result<LinePattern> compile(std::string_view pattern);

  LinePattern(LinePattern&&) noexcept;
  LinePattern& operator=(LinePattern&&) noexcept;
  ~LinePattern();

  // Where the pattern matches somewhere in `line`: the text of its first capture group when it
  // has one that took part in the match, else the whole match. nullopt when it does not match.
  // Thread-safe on one LinePattern (RE2 is).
  std::optional<std::string> search(std::string_view line) const;

  const std::string& pattern() const { return pattern_; }

 private:
  LinePattern(std::string pattern, std::unique_ptr<re2::RE2> re);

  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace chorus
