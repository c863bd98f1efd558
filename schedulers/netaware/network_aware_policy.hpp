// network-aware: places a task on the node where it is predicted to finish first, from the nodes'
// live telemetry (schedulers/node_facts.hpp) and what the task moves (TaskSpec::data).
//
// Decision (PlacementStep's batch path, PlacementPolicy::score_all):
// 1. filter: resources (fit_by_resources).
// 2. every node that fits now gets the analytic estimate (features.hpp: TCP transfers at the
//    probed rate capped by the unused capacity, + the CPU part under the node's CFS quota) from
//    its last telemetry snapshot if that is younger than `max_stale` (a snapshot older than
//    `max_age` is stale: still used, and the basis says how old). A snapshot's age is the node's
//    report's, or the age of the measurement of a link the task uses when that is older (a probe
//    target that went down).
// 3. with a `model`, the `prefilter` nodes with the smallest analytic estimates get the model's
//    prediction instead (fresh snapshots only; a stale one keeps its analytic estimate); the
//    others rank behind them by their analytic estimate. The cheap estimate for all and the
//    model for a few keeps 1,000 nodes within the decision budget.
// 4. a node with no estimate (no telemetry, a snapshot older than `max_stale`, or no bandwidth
//    measured to a source the task reads or writes) ranks behind every estimated node, in
//    least-allocated order: the fallback.
// Highest score wins (score = - estimated seconds, tiers apart); then (`wait`, on by default) a
// busy node whose task of ours is due to end soon enough that it would finish this one sooner
// leaves the task waiting (waits_for_better; the queue passes over it). explain() records the
// chosen node and the next best with their estimates, features and the basis.
//
// Options (`scheduler: {placement: network-aware, model: m.json, max_age: 30s, ...}`):
//   model: FILE      a model from `chorus model train` (TreeModel::load at construction; a file
//                    that does not load refuses the policy, the error naming the file). Relative
//                    paths are relative to the working directory. Default: none (analytic).
//   max_age: 30s     telemetry older than this is stale.
//   max_stale: 5m    telemetry older than this is not used at all (the fallback).
//   prefilter: 32    how many nodes the model sees per decision (1..256).
//   wait: 0          leave a task queued when a busy node is predicted to finish it sooner:
//                    its due time (when the task this policy placed there is predicted to
//                    end) + its estimate there < (1 - wait) x the best free node's estimate.
//                    An earliest-finish-time rule; the queue passes over the waiting task
//                    (QueuePolicy::pass_over), so the tasks behind it may take the free nodes
//                    it declined, and it comes first again when the node frees. A node past
//                    its due time, or with no due time known (a task another path placed), is
//                    never waited for. `off`: never wait (the default until 2026-12-08).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "schedulers/netaware/features.hpp"
#include "schedulers/netaware/tree_model.hpp"
#include "schedulers/placement_explanation.hpp"
#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"

namespace chorus {

class NetworkAwarePolicy final : public PlacementPolicy {
 public:
  static constexpr std::size_t kMaxPrefilter = 256;

  struct Options {
    std::shared_ptr<const TreeModel> model;  // null = the analytic estimate alone
    Duration max_age = std::chrono::seconds(30);
    Duration max_stale = std::chrono::minutes(5);
    std::size_t prefilter = 32;
    double wait = 0;                        // < 0 (`wait: off`): never wait for a busy node
    std::vector<std::string> source_names;  // by SourceId, for the basis's words
  };

  // How a node's estimate was made.
  enum class Basis : std::uint8_t {
    model,        // the model's prediction (fresh telemetry, in the prefilter)
    analytic,     // the analytic estimate from a fresh snapshot
    stale,        // the analytic estimate from a stale snapshot (older than max_age)
    outside,      // the analytic estimate, not in the model's prefilter (ranks behind it)
    unpredicted,  // the analytic estimate: the model has no prediction there (log_ratio, no
                  // estimate to correct); ranks behind the predicted nodes
    fallback,     // no estimate: least-allocated order behind every estimated node
  };

  explicit NetworkAwarePolicy(Options options) : options_(std::move(options)) {}

  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<PlacementPolicy>> from_args(PolicyArgs& args);

  std::string_view name() const override { return "network-aware"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  // One node alone (an MPI spread's nodes): the analytic estimate from its snapshot as if it
  // were fresh (no time comes with this call), else the fallback.
  double score(const TaskSpec& task, const NodeView& node) const override;

  bool batch_scores() const override { return true; }
  void score_all(const TaskSpec& task, std::span<const NodeView* const> nodes, TimePoint now,
                 std::span<double> scores) const override;
  bool waits_for_better(const TaskSpec& task, const NodeView& best, double best_score,
                        std::span<const NodeView* const> busy, TimePoint now) const override;
  bool explain(const TaskSpec& task, std::span<const NodeView* const> nodes,
               std::span<const double> scores, std::size_t chosen, TimePoint now,
               PlacementExplanation& out) const override;

  const Options& options() const { return options_; }

 private:
  // The analytic estimate of `task` on `node` at `now` (features filled into `f`); NaN when none
  // can be made (then `basis` is fallback). `age_s`: the snapshot's age, NaN = none.
  double analytic(const TaskSpec& task, const NodeView& node, TimePoint now, FeatureVector& f,
                  Basis& basis, double& age_s) const;
  // The basis's words for the chosen node, into `out` (no allocation once it has grown).
  void describe_basis(const TaskSpec& task, const NodeView& node, Basis basis, double age_s,
                      const FeatureVector& f, std::string& out) const;

  Options options_;
  // By node index: when the tasks this policy placed there are predicted to end (the wait
  // option only; pruned as they pass). The policy lives on the scheduler loop's thread.
  mutable std::vector<std::vector<TimePoint>> due_;
  // By task id: when it first waited for a busy node (epoch: not waiting), and how long the task
  // just placed had waited (explain() appends it to the basis).
  mutable std::vector<TimePoint> waiting_since_;
  mutable double waited_s_ = 0;
};

}  // namespace chorus
