// SLURM_JOB_CPUS_PER_NODE: "4(x3),2" -> {4, 4, 4, 2}.
#pragma once

#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace chorus {

// Expands Slurm's CPU-count list: comma-separated items, each "N" or "N(xR)" (N CPUs on each of
// R consecutive nodes), in node order. N may be 0 only when Slurm says so (it never does for a
// job's nodes, so 0 is refused); R must be at least 1.
// Errors (invalid_argument, quoting the text): empty text or item, non-numeric counts, a
// malformed "(x...)" suffix, more than `max_nodes` entries in total.
Result<std::vector<int>> parse_cpus_per_node(std::string_view text,
                                             std::size_t max_nodes = 1'000'000);

}  // namespace chorus
