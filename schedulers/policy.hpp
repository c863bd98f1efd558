// The scheduler's plug-in points: which task next (QueuePolicy) and where it runs
// (PlacementPolicy).
//
// Contract for every policy: a pure function of its inputs. No I/O, no threads, no wall clock;
// time comes in as arguments. The live coordinator and the simulator call the same objects.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "core/node_info.hpp"
#include "core/task_spec.hpp"
#include "core/task_state.hpp"
#include "core/units.hpp"
#include "schedulers/node_facts.hpp"

namespace chorus {

// One node as a policy sees it. More per-node facts go into NodeFacts (node_facts.hpp), not here.
struct NodeView {
  const NodeInfo* info = nullptr;
  Resources free;   // capacity minus what running tasks hold
  int running = 0;  // tasks running there
  // Its position in the cluster's nodes (ClusterState and the views' span), for a policy that
  // keeps tables of its own by node; -1 in a view built by hand without one.
  int index = -1;
  // The node's other facts (ClusterState owns them); null in a view built by hand without them.
  const NodeFacts* facts = nullptr;
};

// What a policy that explains its decisions writes for one (schedulers/placement_explanation.hpp).
struct PlacementExplanation;

struct ClusterView {
  std::span<const NodeView> nodes;
  TimePoint now;
};

// Orders ready tasks. The coordinator calls on_ready when a task's dependencies are done, next()
// to ask which task should be placed now (it stays queued), and on_start when it was placed (the
// policy removes it). remove() takes out a queued task that will not run (cancelled).
//
// Passing over a waiting task. The order is strict: the caller stops at a task that does not fit
// now (no backfill: a large task is never starved by small ones). One case is not about fit: the
// placement policy would rather wait for a busy node than take a free one
// (PlacementPolicy::waits_for_better, Placement::waiting_for_better). For that task the caller
// asks pass_over(task) (`task` is what next() just named): true lets the next next() calls of
// this dispatch pass name the tasks behind it, which may take the free nodes it declined; it
// keeps its place, so begin_pass() (at the start of every dispatch pass) puts it first again and
// it takes the node it waits for as soon as that frees. false (the default; and when a policy's
// bound on passed tasks is reached) keeps the strict order: the caller stops there.
class QueuePolicy {
 public:
  virtual ~QueuePolicy() = default;
  virtual std::string_view name() const = 0;
  virtual void on_ready(const TaskSpec& task, TimePoint now) = 0;
  virtual std::optional<TaskId> next(const ClusterView& cluster) = 0;
  virtual void on_start(const TaskSpec& task, TimePoint now) = 0;
  virtual void on_finish(const TaskSpec& /*task*/, TaskState /*outcome*/, Duration /*ran_for*/,
                         TimePoint /*now*/) {}
  virtual void remove(TaskId task) = 0;
  virtual std::size_t size() const = 0;
  virtual void begin_pass() {}
  virtual bool pass_over(TaskId /*task*/) { return false; }
};

enum class Fit : std::uint8_t {
  now,    // fits in the node's free resources
  later,  // fits in its capacity once others finish
  never,  // can never fit on this node
};

// Chooses a node for a task: filter() rules nodes in or out, score() ranks the ones that fit now
// (highest wins; ties go to the first node).
//
// Two optional hooks, for a policy whose scores depend on each other or on the time (the
// network-aware placement: a cheap estimate for every node, an expensive one for the best few)
// and that tells why it chose (the journal's placement record, `chorus why`):
// - batch_scores() true: PlacementStep hands every node that fits now to score_all() at once,
//   with the decision's time, instead of calling score() per node. Spreading an MPI task over
//   nodes still calls score() per node.
// - explain(): after a batch decision, fills `out` (caller-owned scratch, reused from decision to
//   decision so steady state allocates nothing) for the candidate `chosen` of `nodes`; false =
//   nothing to record.
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual Fit filter(const TaskSpec& task, const NodeView& node) const = 0;
  virtual double score(const TaskSpec& task, const NodeView& node) const = 0;

  virtual bool batch_scores() const { return false; }
  // scores.size() == nodes.size(); the default is score() per node.
  virtual void score_all(const TaskSpec& task, std::span<const NodeView* const> nodes,
                         TimePoint /*now*/, std::span<double> scores) const {
    for (std::size_t i = 0; i < nodes.size(); ++i) scores[i] = score(task, *nodes[i]);
  }
  virtual bool explain(const TaskSpec& /*task*/, std::span<const NodeView* const> /*nodes*/,
                       std::span<const double> /*scores*/, std::size_t /*chosen*/,
                       TimePoint /*now*/, PlacementExplanation& /*out*/) const {
    return false;
  }
  // Batch path, once per single-node decision, after `best` (score `best_score`) was chosen
  // among the nodes that fit now: true leaves the task queued (Fit::later, waiting_for_better)
  // because a node in `busy` (where it fits once others finish) is predicted to finish it
  // sooner. The caller then asks the queue to pass over it (QueuePolicy::pass_over): the tasks
  // behind it may take the free nodes, and it comes first again at the next dispatch pass (every
  // loop turn); a queue that cannot pass over holds them too. A policy that predicts times notes
  // `best`'s due time when it answers false (the task is placed there). The default never waits.
  virtual bool waits_for_better(const TaskSpec& /*task*/, const NodeView& /*best*/,
                                double /*best_score*/, std::span<const NodeView* const> /*busy*/,
                                TimePoint /*now*/) const {
    return false;
  }
};

// The resource check most placement filters start from.
inline Fit fit_by_resources(const TaskSpec& task, const NodeView& node) {
  Resources need = task.total();
  if (need.fits_in(node.free)) return Fit::now;
  if (need.fits_in(node.info->capacity)) return Fit::later;
  return Fit::never;
}

}  // namespace chorus
