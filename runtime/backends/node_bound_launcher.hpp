// NodeBoundLauncher: work that runs on agents' nodes but is not started by the agents (an MPI
// task's srun step or mpirun, started from the coordinator's host) ends when one of its nodes'
// agents is lost, like the agents' own tasks do.
//
// Why: the agents are how the coordinator knows a node is usable. Without this, an MPI step
// placed on a node in the moment between the node's failure and its agent's loss (or on a node
// whose agent died while Slurm still runs steps there) is left to srun, which may never return:
// the run then waits for it forever (seen in CI: a retry after a node failure held the run
// 120 s+). With it, the attempt is stopped and reported as UpdateKind::lost ("lost: the agent on
// node n2 is lost; this task had ranks there"), and the coordinator's retry policy applies.
//
// Cost: nothing per poll while no agent is lost (one counter compared); after a loss, one look
// at the nodes of each in-flight task of the inner launcher (MPI tasks: a handful).
//
// Threading: the coordinator's, like every Launcher.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "adapters/launcher.hpp"
#include "runtime/agent/agent_launcher.hpp"

namespace chorus {

class NodeBoundLauncher final : public Launcher {
 public:
  struct Liveness {
    std::function<bool(std::string_view node)> alive;
    std::function<std::uint64_t()> losses;  // grows by one with each agent declared lost
  };
  // `inner` must outlive this.
  NodeBoundLauncher(Launcher& inner, Liveness liveness);

  std::string_view name() const override { return inner_.name(); }
  // Errors: those of inner.launch(); unavailable when a node of the request is already lost
  // (nothing is started).
  Result<LaunchHandle> launch(const LaunchRequest& request) override;
  void flush() override { inner_.flush(); }
  void poll(std::vector<StateUpdate>& out) override;
  Status cancel(LaunchHandle handle) override { return inner_.cancel(handle); }
  int wait_fd() const override { return inner_.wait_fd(); }
  std::optional<TimePoint> next_deadline() const override { return inner_.next_deadline(); }
  std::size_t in_flight() const override { return inner_.in_flight(); }
  std::optional<ProcessGroup> process_group(LaunchHandle handle) const override {
    return inner_.process_group(handle);
  }
  std::optional<ReplicaReadiness> readiness(LaunchHandle handle) const override {
    return inner_.readiness(handle);
  }

 private:
  struct Placed {
    LaunchHandle handle = 0;
    std::vector<std::string> nodes;
    std::string lost_message;  // set once stopped for a lost node
  };
  static std::uint64_t key(TaskId task, std::uint32_t attempt) {
    return (static_cast<std::uint64_t>(task) << 32) | attempt;
  }
  const std::string* first_lost(const std::vector<std::string>& nodes) const;

  Launcher& inner_;
  Liveness liveness_;
  std::uint64_t losses_seen_ = 0;
  std::unordered_map<std::uint64_t, Placed> placed_;  // by (task, attempt)
};

// `mpi` bound to the agents' liveness: what the agents backends give for MPI tasks. Both
// arguments must outlive the result.
std::unique_ptr<Launcher> bound_to_agents(Launcher& mpi, const AgentLauncher& agents);

}  // namespace chorus
