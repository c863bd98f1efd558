#include "core/line_pattern.hpp"

#include <re2/re2.h>

namespace chorus {
namespace {

// The pattern as a message quotes it: a long one is cut, so the message stays readable.
std::string quoted(std::string_view pattern) {
  constexpr std::size_t kShown = 60;
  if (pattern.size() <= kShown) return "'" + std::string(pattern) + "'";
  std::size_t cut = kShown;  // not inside a UTF-8 sequence
  while (cut > 0 && (static_cast<unsigned char>(pattern[cut]) & 0xC0) == 0x80) --cut;
  return "'" + std::string(pattern.substr(0, cut)) + "...' (" + std::to_string(pattern.size()) +
         " bytes)";
}

}  // namespace

LinePattern::LinePattern(std::string pattern, std::unique_ptr<re2::RE2> re)
    : pattern_(std::move(pattern)), re_(std::move(re)) {}
LinePattern::LinePattern(LinePattern&&) noexcept = default;
LinePattern& LinePattern::operator=(LinePattern&&) noexcept = default;
LinePattern::~LinePattern() = default;

Result<LinePattern> LinePattern::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return invalid_argument(quoted(pattern) + " is longer than the " +
                            std::to_string(kMaxPatternBytes) + " bytes a ready pattern may have");
  }
  RE2::Options options;
  options.set_log_errors(false);  // the error travels in the Status, not on stderr
  options.set_max_mem(kMaxMemoryBytes);
  auto re = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    std::string why = re->error();
    if (re->error_code() == RE2::ErrorPatternTooLarge) {
      why += " (it needs more than " + std::to_string(kMaxMemoryBytes >> 20) + " MiB to match)";
    }
    return invalid_argument(quoted(pattern) +
                            " is not a valid regular expression (RE2 syntax: no backreferences "
                            "or lookaround): " +
                            why);
  }
  return LinePattern(std::string(pattern), std::move(re));
}

std::optional<std::string> LinePattern::search(std::string_view line) const {
  re2::StringPiece groups[2];
  const int n = re_->NumberOfCapturingGroups() >= 1 ? 2 : 1;
  if (!re_->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED,
                  groups, n)) {
    return std::nullopt;
  }
  const re2::StringPiece& got = n == 2 && groups[1].data() != nullptr ? groups[1] : groups[0];
  return std::string(got.data(), got.size());
}

}  // namespace chorus
