#include "workflows/suggestion.hpp"

#include "core/text.hpp"

namespace chorus {
namespace {

bool is_transposition(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  std::size_t first = 0;
  while (first < a.size() && a[first] == b[first]) ++first;
  if (first + 1 >= a.size()) return false;
  if (a[first] != b[first + 1] || a[first + 1] != b[first]) return false;
  return a.substr(first + 2) == b.substr(first + 2);
}

}  // namespace

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = closest_match(word, candidates);
  if (!best.empty() || word.size() < 2) return best;
  int matches = 0;
  for (const auto& c : candidates) {
    if (is_transposition(word, c) || (word.size() >= 3 && c.starts_with(word))) {
      best = c;
      ++matches;
    }
  }
  return matches == 1 ? best : std::string{};
}

std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = closest_word(word, candidates);
  return best.empty() ? std::string{} : " (did you mean '" + best + "'?)";
}

}  // namespace chorus
