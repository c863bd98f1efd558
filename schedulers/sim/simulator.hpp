// The discrete-event simulator: replays a Workload on a SimCluster through a QueuePolicy and a
// PlacementPolicy — the same objects, called in the same order (on_ready → next → on_start →
// on_finish) as the live coordinator — in simulated time. No processes, no sleeping, no threads.
//
// Semantics: every task runs exactly its runtime (no failures); dispatch happens after all
// completions and arrivals of an instant have been handed to the policy, and, as in the
// coordinator, stops at the first task the policy names that does not fit now (strict order:
// the policy decides what may overtake what). Where a task goes is the coordinator's own
// PlacementStep over a ClusterState (schedulers/placement/), MPI tasks spread over nodes
// included. Task ids are dense over the whole workload.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "schedulers/netaware/training/training_row.hpp"
#include "schedulers/policy.hpp"
#include "schedulers/sim/network_model.hpp"
#include "schedulers/sim/sim_cluster.hpp"
#include "schedulers/sim/workload.hpp"

namespace chorus::sim {

struct JobRecord {
  std::string id;
  std::string user;
  std::string job_class;
  SizeClass size = SizeClass::unknown;  // as in the workload (metrics classify unknown ones)
  double arrival_s = 0;
  double start_s = 0;   // its first task started
  double finish_s = 0;  // its last task finished
  double work = 0;      // core-seconds
  double alone_s = 0;   // its runtime alone on the cluster: max(critical path, work / cores)
  std::size_t tasks = 0;

  double response_s() const { return finish_s - arrival_s; }
};

// Service each user received while it had work (ready or running), against its max-min fair
// entitlement over the same instants (weights as in SimOptions), both in core-seconds.
struct UserShare {
  double received = 0;
  double entitled = 0;
};

struct SimOptions {
  std::map<std::string, double> user_weights;  // for the entitlement; missing = 1
  // A modelled network (network_model.hpp), one node per cluster node: before each dispatch the
  // nodes' NodeFacts are written from it, and a data task's true runtime is the model's at its
  // start (its runtime_s then being its CPU seconds). Null: every task runs its runtime_s.
  const NetworkModel* network = nullptr;
  // With a network: one row per placed data task (the chosen node's feature vector as the policy
  // saw it, its true runtime), for `chorus model train --rows`; `run` left empty.
  std::vector<TrainingRow>* rows = nullptr;
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // in workload order
  std::map<std::string, UserShare> users;
  double makespan_s = 0;
  std::uint64_t decisions = 0;  // tasks started
};

// Errors: invalid_argument for an invalid workload (validate_workload); unsatisfiable for a task
// that needs more cores than the largest node (an MPI task: whose ranks the empty cluster cannot
// hold, with PlacementStep's why); internal when the policy misbehaves (names a task
// that is not queued, or leaves tasks queued on an idle cluster).
Result<SimResult> simulate(const Workload& workload, const SimCluster& cluster, QueuePolicy& queue,
                           PlacementPolicy& placement, const SimOptions& options = {});

}  // namespace chorus::sim
