// Sweeps (`foreach:`): value lists, range() expressions, the cartesian product of several
// variables and the names of its members. Pure functions, no YAML.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "core/task_spec.hpp"

namespace chorus {

struct SweepVariable {
  std::string name;
  std::vector<std::string> values;
};

// Parses "range(a, b)" or "range(a, b, step)" with Python's meaning (a, a+step, ... stopping
// before b; step may be negative) into decimal strings. Errors (invalid_argument): not of that
// form, a bound that is not a whole number, step 0, an empty range, more than `max_values` values
// (checked before anything is allocated).
Result<std::vector<std::string>> expand_range(std::string_view text, std::uint64_t max_values);

// Whether a foreach value is usable in a member name and a file name: not empty, and none of
// '/', '[', ']', ',', '=' or control characters. The message says why not.
Status check_sweep_value(std::string_view value);

// Number of members (product of the value counts), saturating at UINT64_MAX.
std::uint64_t sweep_size(const std::vector<SweepVariable>& vars);

// The bindings of member `index` (< sweep_size), in the variables' order; the first variable
// varies slowest, so members come out in the order a nested loop written in that order gives.
KeyValues sweep_member(const std::vector<SweepVariable>& vars, std::uint64_t index);

// "base[a=1,b=x]" in the order of `bindings`.
std::string member_name(std::string_view base, const KeyValues& bindings);

}  // namespace chorus
