// Slurm hostlist expressions: "n[1-3,7]" <-> {n1, n2, n3, n7}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace chorus {

// Expands a hostlist as Slurm writes it in SLURM_JOB_NODELIST: comma-separated items, each a
// name with zero or more bracket groups of comma-separated numbers or lo-hi ranges ("n[1-3,7]",
// "a[01-10]b", "x1,y[2-3]", "r[1-2]n[1-2]" as a product). A range keeps the width of its lower
// bound ("[08-10]" -> 08, 09, 10). Order is kept; duplicates are kept.
// Errors (invalid_argument, quoting the expression): unbalanced or nested brackets, an empty name
// or range, a non-numeric bound, a range whose upper bound is below its lower one, more than
// `max_hosts` names (a typo like "n[1-999999999]" must not exhaust memory).
Result<std::vector<std::string>> expand_hostlist(std::string_view expression,
                                                 std::size_t max_hosts = 1'000'000);

// The shortest usual form of a list of host names: consecutive hosts that share a prefix (all but
// their trailing digits) become one bracket group of ranges, in input order ("n1,n2,n3,n7" ->
// "n[1-3,7]"). expand_hostlist(compress_hostlist(h)) == h for names without '[', ']' or ','.
std::string compress_hostlist(const std::vector<std::string>& hosts);

}  // namespace chorus
