// ExecutionBackend: where a run's tasks execute — this machine, agents started by hand, a Slurm
// allocation (and next, Kubernetes pods). One object per site, built by that site's factory
// (local_backend.hpp, agents_backend.hpp, slurm_backend.hpp); api::run_workflow runs on one.
//
// Contract:
// - Lifecycle: factory -> start() -> any number of runs -> stop() (the destructor stops too).
//   The caller owns it and calls start and stop; run_workflow only uses a started backend, so a
//   long-lived program (chorus serve) may keep agents or pods up across runs.
// - start() may block (waiting for agents to register) until done, failed, or the token is
//   requested. On failure the backend has already undone what it started (stop() is a no-op
//   then) and the Status says why in words a user can act on; ErrorCode::cancelled when the
//   token was requested while waiting.
// - stop() tells agents to exit and ends what start() created (an srun step, pods), bounded:
//   it never waits longer than about ten seconds. Idempotent.
// - launchers(), nodes() and wrap_placement() are valid between start() and stop(). The
//   launchers are used from one thread (the coordinator's), like every Launcher.
// - wrap_placement() is called once per run, with the run's placement policy: a backend whose
//   nodes can be lost (agents) wraps it so a lost node is "not now"; others return it as is.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/status.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/node_facts_source.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

// What start() is given.
struct BackendStart {
  // Requested (Ctrl-C): start() stops waiting with ErrorCode::cancelled. Backends that can lose
  // every node during a run (all agents lost) request it too, to stop the run.
  CancelToken* cancel = nullptr;
  // The run's state folder; agents' key folders go below it (<state_dir>/agents/<pid>).
  std::string state_dir;
};

class ExecutionBackend {
 public:
  virtual ~ExecutionBackend() = default;
  ExecutionBackend() = default;
  ExecutionBackend(const ExecutionBackend&) = delete;
  ExecutionBackend& operator=(const ExecutionBackend&) = delete;

  // "local", "agents", "slurm": for messages.
  virtual std::string_view name() const = 0;
  virtual Status start(const BackendStart& how) = 0;
  virtual void stop() = 0;
  // One launcher per TaskKind (services share the executable tasks' launcher); not owned by
  // the caller: they live until the backend is destroyed.
  virtual LauncherTable launchers() = 0;
  // The nodes placement sees and the journal records, with the addresses their agents
  // connected from (services' endpoints and probes use them). Launchers run tasks on
  // LaunchRequest::node.
  virtual const std::vector<NodeInfo>& nodes() const = 0;
  virtual std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const = 0;
  // What the site's own machinery printed last (the srun step that starts the agents; next,
  // pods' logs), for a report after a failure; "" when there is nothing to show.
  virtual std::string site_output(int /*max_lines*/) const { return {}; }
  // The nodes' telemetry (agents report it), or nullptr when the site has none; valid between
  // start() and stop(). run_workflow gives it the run's data sources and the coordinator.
  virtual NodeFactsSource* facts_source() { return nullptr; }
  // Whether what a killed coordinator left running is the site's to find and take over
  // (Kubernetes: the run's Pods by label) rather than processes on this host. When true, a
  // resume kills no host processes of the run: they may be containers of Pods it adopts (the
  // kubelets can share this host, as on the test cluster).
  virtual bool adopts_running_work() const { return false; }
  // After stop(): what it could not undo, in words a user can act on (Pods a server that stopped
  // answering could not delete); "" when it undid everything.
  virtual std::string stop_problem() const { return {}; }
  // How many times per task an attempt this site lost (UpdateKind::lost: a node's agent gone)
  // is queued again without using one of the task's retries (CoordinatorOptions::lost_requeues).
  // A node lost is the site's doing, not the task's; and a retry placed in the moment before
  // the loss is noticed is lost once more (the agents backends: 3). 0: losses are attempts.
  virtual std::uint32_t lost_requeues() const { return 0; }
  // Once per coordinator turn of a served instance, on the coordinator's thread: how many tasks
  // wait in the queue. A site that grows with the demand (pilots_backend.hpp) returns when it
  // wants the next turn at the latest (it also watches its nodes going idle); nullopt: no wish.
  virtual std::optional<TimePoint> on_turn(std::size_t /*queued*/, TimePoint /*now*/) {
    return std::nullopt;
  }
};

// The table for a backend whose services run where its executable tasks do.
inline LauncherTable launcher_table(Launcher& executable, Launcher& function, Launcher& mpi) {
  LauncherTable t{};
  t[static_cast<std::size_t>(TaskKind::executable)] = &executable;
  t[static_cast<std::size_t>(TaskKind::service)] = &executable;
  t[static_cast<std::size_t>(TaskKind::function)] = &function;
  t[static_cast<std::size_t>(TaskKind::mpi)] = &mpi;
  return t;
}

}  // namespace chorus
