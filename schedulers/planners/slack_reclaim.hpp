// Slack reclamation: an optional step after SPWD's merge (not in the paper). SPWD gives every
// subworkflow a fixed share of the deadline, and small pieces cannot mix machine types to use all
// of their share, so the merged plan usually finishes early. This pass moves single tasks to a
// cheaper (slower) type while the plan still meets the deadline on the original DAG:
// repeatedly, the move saving the most cost per second of added runtime whose task fits between
// its earliest start and latest finish is applied, until no move fits.
// It only ever lowers the cost and keeps the deadline, and it is reported separately (the plan's
// stats keep the cost before it).
#pragma once

#include <cstddef>
#include <vector>

#include "core/workflow_graph.hpp"
#include "schedulers/planners/platform.hpp"

namespace chorus {

// Returns the number of moves applied. `type` (per task) must meet `deadline_s` on entry.
std::size_t reclaim_slack(const WorkflowGraph& graph, const Platform& platform, double deadline_s,
                          std::vector<std::size_t>& type);

}  // namespace chorus
