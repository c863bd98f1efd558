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

// Length of the well-formed UTF-8 sequence that starts at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when that byte starts none. i < text.size().
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

// Offset of the first byte that is not part of a well-formed UTF-8 sequence, or npos.
std::size_t first_invalid_utf8(std::string_view text);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace chorus
