// Runtime partitioning (arXiv 2510.15485, §runtime partitioning): divisible work is cut into
// pieces of about a target runtime, so that with non-preemptive dispatch a long job holds a core
// for at most about `target` before the queue policy gets to choose again.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/runtime_partition.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

// n = ceil(runtime / target) equal pieces (1 when target <= 0 or runtime <= target); the one
// implementation lives in core/, shared with workflow files' `partition:`.
using chorus::partition_runtime;

// How a split job lists its pieces, i.e. the order a queue that takes a job's ready tasks in
// list order dispatches them (docs/uwfq-beyond-the-paper.md, finding 3):
// - listed: each task's pieces together, in the task's place (piece 0..n-1 of task 0, then of
//   task 1, ...). Equal pieces of one task start on cores that free together and end together.
// - interleaved: in a job whose tasks wait for none of its others, round-robin over its tasks
//   (piece 0 of every task, then piece 1 of every task that has one, ...), so cores that free
//   together get pieces of different lengths and free apart again. Jobs with waits inside keep
//   the listed order (a piece may only wait for pieces listed before it).
enum class PieceOrder { listed, interleaved };

// Splits every task of every divisible job; dependencies between split tasks are kept (a piece of
// task b waits for all pieces of a when b waited for a). Jobs that are not divisible, and jobs
// tied to other jobs by after_other (their task indices are referenced), are copied.
Workload partition_divisible(const Workload& w, double target_s,
                             PieceOrder order = PieceOrder::listed);

// "listed" / "interleaved"; nullopt for anything else.
std::optional<PieceOrder> parse_piece_order(std::string_view text);

}  // namespace chorus::sim
