// The Kubernetes-style placement baselines (schedulers/placement/least_allocated.hpp,
// balanced_allocation.hpp, kube_default.hpp): their scores, which node wins through
// PlacementStep, ties to the first node, memory-less nodes, and the registry's names.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "schedulers/placement/balanced_allocation.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/kube_default.hpp"
#include "schedulers/placement/least_allocated.hpp"
#include "schedulers/placement/placement_step.hpp"
#include "schedulers/policy_registry.hpp"

namespace {

using chorus::ClusterState;
using chorus::Fit;
using chorus::NodeInfo;
using chorus::Placement;
using chorus::PlacementStep;
using chorus::Resources;
using chorus::TaskSpec;

TaskSpec task(int cores, std::int64_t memory_mb = 0, int gpus = 0) {
  TaskSpec t;
  t.name = "t";
  t.per_rank = Resources{cores, memory_mb, gpus};
  return t;
}

// Holds `held` on node `index` (one running task).
void hold(ClusterState& c, int index, Resources held) {
  Placement p;
  p.fit = Fit::now;
  p.node = index;
  TaskSpec t;
  t.per_rank = held;
  c.reserve(t, p);
}

int winner(const chorus::PlacementPolicy& policy, const TaskSpec& t, const ClusterState& c) {
  PlacementStep step(policy);
  Placement p = step.place(t, c);
  REQUIRE(p.fit == Fit::now);
  return p.node;
}

}  // namespace

TEST_CASE("Schedulers.PlacementPolicies.LeastAllocatedScoresFreeAfterPlacement") {
  ClusterState c({{"a", {8, 1000, 0}}, {"b", {8, 1000, 0}}});
  hold(c, 0, {2, 600, 0});  // a: 6 cores, 400 MB free
  hold(c, 1, {4, 0, 0});    // b: 4 cores, 1000 MB free
  chorus::LeastAllocated policy;
  // a: (6-2)/8 and (400-100)/1000 -> (0.5 + 0.3) / 2; b: (4-2)/8, 900/1000 -> (0.25 + 0.9) / 2.
  CHECK(policy.score(task(2, 100), c.view(0)) == doctest::Approx(0.4));
  CHECK(policy.score(task(2, 100), c.view(1)) == doctest::Approx(0.575));
  CHECK(winner(policy, task(2, 100), c) == 1);
  // GPUs count only when the task asks for them.
  ClusterState g({{"a", {8, 0, 2}}, {"b", {8, 0, 4}}});
  CHECK(policy.score(task(4), g.view(0)) == doctest::Approx(0.5));
  CHECK(policy.score(task(4, 0, 1), g.view(0)) == doctest::Approx((0.5 + 0.5) / 2));
  CHECK(winner(policy, task(4), g) == 0);        // cores alone: a tie, the first node
  CHECK(winner(policy, task(4, 0, 1), g) == 1);  // b keeps 3 of 4 GPUs
}

TEST_CASE("Schedulers.PlacementPolicies.LeastAllocatedSpreadsAndTiesToTheFirstNode") {
  ClusterState c({{"n1", {4, 0, 0}}, {"n2", {4, 0, 0}}, {"n3", {4, 0, 0}}});
  chorus::LeastAllocated policy;
  CHECK(winner(policy, task(1), c) == 0);  // all empty: the first
  hold(c, 0, {1, 0, 0});
  CHECK(winner(policy, task(1), c) == 1);  // the emptiest, the first of n2 and n3
  hold(c, 1, {1, 0, 0});
  CHECK(winner(policy, task(1), c) == 2);
  // Memory-less nodes are scored on their cores alone, not zeroed for memory nobody counts.
  // known: (2/4 + 500/1000) / 2 = 0.5; untracked: 3/4 (Kubernetes would score its memory 0:
  // (0.75 + 0) / 2, and send the task to known).
  ClusterState mixed({{"known", {4, 1000, 0}}, {"untracked", {4, 0, 0}}});
  hold(mixed, 0, {1, 500, 0});
  CHECK(policy.score(task(1), mixed.view(0)) == doctest::Approx(0.5));
  CHECK(policy.score(task(1), mixed.view(1)) == doctest::Approx(0.75));
  CHECK(winner(policy, task(1), mixed) == 1);
}

TEST_CASE("Schedulers.PlacementPolicies.BalancedAllocationPrefersResourcesUsedInStep") {
  ClusterState c({{"a", {8, 1000, 0}}, {"b", {8, 1000, 0}}});
  hold(c, 0, {6, 0, 0});    // a: cores 6/8 held, memory idle
  hold(c, 1, {2, 200, 0});  // b: 2/8 and 200/1000
  chorus::BalancedAllocation policy;
  // A 2-core, 400 MB task: a -> 1.0 and 0.4 (std 0.3); b -> 0.5 and 0.6 (std 0.05).
  CHECK(policy.score(task(2, 400), c.view(0)) == doctest::Approx(0.7));
  CHECK(policy.score(task(2, 400), c.view(1)) == doctest::Approx(0.95));
  CHECK(winner(policy, task(2, 400), c) == 1);
  // A memory-heavy task evens a out instead: a -> 1.0, 0.7 (std 0.15); b -> 0.5, 0.9 (std 0.2).
  CHECK(policy.score(task(2, 700), c.view(0)) == doctest::Approx(0.85));
  CHECK(policy.score(task(2, 700), c.view(1)) == doctest::Approx(0.8));
  CHECK(winner(policy, task(2, 700), c) == 0);
  // Fractions are capped at 1: 2 cores on a full-memory node.
  ClusterState full({{"f", {8, 1000, 0}}});
  hold(full, 0, {0, 1000, 0});
  CHECK(policy.score(task(2), full.view(0)) == doctest::Approx(1 - (1 - 0.25) / 2));
  // Three resources (GPUs asked for): the population standard deviation.
  ClusterState g({{"g", {4, 1000, 2}}});
  // 2 of 4 cores, 500 of 1000 MB, 2 of 2 GPUs: fractions 0.5, 0.5, 1 -> std = sqrt(1/18).
  CHECK(policy.score(task(2, 500, 2), g.view(0)) == doctest::Approx(1 - std::sqrt(1.0 / 18)));
}

TEST_CASE("Schedulers.PlacementPolicies.BalancedAllocationOnMemorylessNodesIsFirstFit") {
  ClusterState c({{"n1", {4, 0, 0}}, {"n2", {8, 0, 0}}});
  hold(c, 0, {3, 0, 0});
  chorus::BalancedAllocation policy;
  CHECK(policy.score(task(1), c.view(0)) == doctest::Approx(1));
  CHECK(policy.score(task(1), c.view(1)) == doctest::Approx(1));
  CHECK(winner(policy, task(1), c) == 0);  // one resource: every node scores 1, the first wins
  CHECK(winner(policy, task(2), c) == 1);  // the first with room
}

TEST_CASE("Schedulers.PlacementPolicies.KubeDefaultWeighsBothEqually") {
  ClusterState c({{"a", {8, 1000, 0}}, {"b", {8, 1000, 0}}, {"c", {8, 1000, 0}}});
  hold(c, 0, {6, 0, 0});
  hold(c, 1, {2, 200, 0});
  chorus::KubeDefault policy;
  chorus::LeastAllocated least;
  chorus::BalancedAllocation balanced;
  const TaskSpec t = task(2, 400);
  for (int i = 0; i < 3; ++i) {
    CHECK(policy.score(t, c.view(i)) ==
          doctest::Approx((least.score(t, c.view(i)) + balanced.score(t, c.view(i))) / 2));
  }
  // c (empty): least (0.75 + 0.6) / 2 = 0.675, balanced 1 - |0.25 - 0.4| / 2 = 0.925 -> 0.8;
  // b: least (0.5 + 0.4) / 2 = 0.45, balanced 0.95 -> 0.7.
  CHECK(winner(policy, t, c) == 2);
  ClusterState same({{"x", {4, 0, 0}}, {"y", {4, 0, 0}}});
  CHECK(winner(policy, task(1), same) == 0);  // ties to the first node
}

TEST_CASE("Schedulers.PlacementPolicies.RegisteredByName") {
  auto registry = chorus::PolicyRegistry::with_builtins();
  for (const char* name : {"least-allocated", "balanced-allocation", "kube-default"}) {
    CAPTURE(name);
    auto p = registry.make_placement(name);
    REQUIRE(p.ok());
    CHECK((*p)->name() == name);
  }
}
