// Small text helpers for user-facing messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chorus {

// Levenshtein distance (bytes).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo (a few edits, a
// swapped pair of letters, or an unambiguous abbreviation), else "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — ready to append to an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// 1-based line and column of byte `offset` in `text` (for parse errors that give a byte offset).
struct LineColumn {
  int line = 1;
  int column = 1;
};
LineColumn line_column_of(std::string_view text, std::size_t offset);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace chorus
