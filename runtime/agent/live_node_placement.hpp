// LiveNodePlacement: a placement policy that keeps work off nodes whose agent is lost, wrapped
// around any other placement policy.
//
// The coordinator's node list is fixed when a run starts; when an agent is lost its node stays in
// the list with its cores free. This wrapper answers "not now" (Fit::later) for such a node, so
// requeued tasks go to the survivors, and a node whose agent registers again is used again. It
// is not a pure policy (it reads the agents' liveness): it is runtime plumbing, kept out of
// schedulers/ for that reason. Backends with agents (runtime/backends/) wrap the run's one
// policy in it (ExecutionBackend::wrap_placement).
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "schedulers/policy.hpp"

namespace chorus {

using NodeAlive = std::function<bool(std::string_view node)>;
// The general form: whether `node` may take `task` now (pilots_backend.cpp adds the pilot's
// walltime and whether it is being released).
using NodeUsable = std::function<bool(const TaskSpec& task, const NodeView& node)>;

class LiveNodePlacement final : public PlacementPolicy {
 public:
  LiveNodePlacement(std::unique_ptr<PlacementPolicy> inner, NodeUsable usable)
      : inner_(std::move(inner)), usable_(std::move(usable)) {}
  std::string_view name() const override { return inner_->name(); }
  // What the inner policy says, except that "now" on a node not usable now is "later".
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    Fit fit = inner_->filter(task, node);
    if (fit == Fit::now && !usable_(task, node)) return Fit::later;
    return fit;
  }
  double score(const TaskSpec& task, const NodeView& node) const override {
    return inner_->score(task, node);
  }
  // The batch hooks pass through: without them a wrapped network-aware policy was scored node by
  // node (its model never consulted, each snapshot taken as fresh) and its decisions were not
  // explained (the journal kept only the chosen node's features).
  bool batch_scores() const override { return inner_->batch_scores(); }
  void score_all(const TaskSpec& task, std::span<const NodeView* const> nodes, TimePoint now,
                 std::span<double> scores) const override {
    inner_->score_all(task, nodes, now, scores);
  }
  bool explain(const TaskSpec& task, std::span<const NodeView* const> nodes,
               std::span<const double> scores, std::size_t chosen, TimePoint now,
               PlacementExplanation& out) const override {
    return inner_->explain(task, nodes, scores, chosen, now, out);
  }
  // Busy nodes that are not usable (agent lost, pilot ending) are not worth waiting for.
  bool waits_for_better(const TaskSpec& task, const NodeView& best, double best_score,
                        std::span<const NodeView* const> busy, TimePoint now) const override {
    usable_busy_.clear();
    for (const NodeView* n : busy) {
      if (usable_(task, *n)) usable_busy_.push_back(n);
    }
    return inner_->waits_for_better(task, best, best_score, usable_busy_, now);
  }

 private:
  std::unique_ptr<PlacementPolicy> inner_;
  NodeUsable usable_;
  mutable std::vector<const NodeView*> usable_busy_;  // reused: no allocation per decision
};

// `inner` wrapped in LiveNodePlacement (null stays null): nodes whose agent is alive.
std::unique_ptr<PlacementPolicy> live_nodes_only(std::unique_ptr<PlacementPolicy> inner,
                                                 NodeAlive alive);
// The same with a predicate of the task too.
std::unique_ptr<PlacementPolicy> usable_nodes_only(std::unique_ptr<PlacementPolicy> inner,
                                                   NodeUsable usable);

}  // namespace chorus
