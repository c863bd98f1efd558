// "did you mean" for workflow files: core's did_you_mean, plus two slips it does not catch on
// short words — a swapped pair of letters ('trian' -> 'train') and an abbreviation
// ('prep' -> 'prepare') — when exactly one candidate fits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chorus {

// The likely intended candidate, or "".
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace chorus
