#include "core/text.hpp"

#include <algorithm>
#include <cctype>

namespace chorus {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

// 'trian' for 'train': one pair of neighbouring letters swapped.
bool is_transposition(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  std::size_t first = 0;
  while (first < a.size() && a[first] == b[first]) ++first;
  if (first + 1 >= a.size()) return false;
  if (a[first] != b[first + 1] || a[first + 1] != b[first]) return false;
  return a.substr(first + 2) == b.substr(first + 2);
}

// By edit distance: accept up to a third of the word's length (at least 1, at most 3 edits).
std::string closest_by_distance(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  return best_d <= limit ? best : std::string{};
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = closest_by_distance(word, candidates);
  if (!best.empty() || word.size() < 2) return best;
  // Slips edit distance misses on short words: a swapped pair ('trian' -> 'train') or an
  // abbreviation ('prep' -> 'prepare'), when exactly one candidate fits.
  int matches = 0;
  for (const auto& c : candidates) {
    if (is_transposition(word, c) || (word.size() >= 3 && c.starts_with(word))) {
      best = c;
      ++matches;
    }
  }
  return matches == 1 ? best : std::string{};
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string m = closest_match(word, candidates);
  return m.empty() ? std::string{} : " (did you mean '" + m + "'?)";
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

LineColumn line_column_of(std::string_view text, std::size_t offset) {
  LineColumn at;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return n;
}

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace chorus
