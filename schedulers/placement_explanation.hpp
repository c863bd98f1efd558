// Why a placement policy chose a node: the candidates it considered with its estimate for each
// and the facts it estimated from, and the basis of the estimates. A policy that explains
// (PlacementPolicy::explain) fills one per decision; the coordinator journals it with the
// attempt's `running` event (runtime/store/state_store.hpp, PlacementRecord) and `chorus why`
// prints it. Caller-owned and reused: clear() keeps the capacity, so steady state allocates
// nothing.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "schedulers/netaware/features.hpp"

namespace chorus {

struct ExplainedCandidate {
  int node = -1;                      // index into the cluster's nodes (NodeView::index)
  double predicted_s = std::nan("");  // the policy's estimate there; NaN = none (a fallback)
  bool has_features = false;
  FeatureVector features{};
};

struct PlacementExplanation {
  // The chosen node and the next best after it, best first.
  static constexpr std::size_t kMaxCandidates = 9;

  // How the chosen node's estimate was made: "model FILE", "analytic (no model)",
  // "analytic (telemetry 40 s old)", "fallback least-allocated (no telemetry)", ...
  std::string basis;
  std::vector<ExplainedCandidate> candidates;  // [0] = the chosen node

  void clear() {
    basis.clear();
    candidates.clear();
  }
};

}  // namespace chorus
