// The agents backend: executable tasks and services run on agents (runtime/agent/) that connect
// to this process over CURVE-encrypted ZeroMQ; function tasks run on the in-process pool here;
// MPI tasks on the launcher the site gives (default: mpirun on this machine).
//
// Who starts the agents is the site's business:
// - by hand (`chorus run --agents N`): nobody here. on_listening tells the user (or the
//   embedding program) the endpoint and key folder, and start() waits for `count` agents.
// - a site with an AgentStarter (slurm_backend.hpp: one srun step; Kubernetes next: pods):
//   start() calls starter->start() once the endpoint listens, polls starter->check() while the
//   agents register, and stop() calls starter->stop() after the agents were told to exit.
//
// Placement: wrap_placement() keeps work off nodes whose agent is lost (LiveNodePlacement);
// MPI work in flight on such a node is stopped and reported lost (NodeBoundLauncher).
// When the last live agent is lost during a run, on_all_lost is called and the start's
// CancelToken requested: nothing can run any more.
//
// Telemetry: facts_source() is an AgentFacts (agent_facts.hpp) over the agents' reports; its
// set_probe_targets() sends the run's data sources to every agent (docs/telemetry.md).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "adapters/inproc/inproc_launcher.hpp"
#include "core/units.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/backends/agent_facts.hpp"
#include "runtime/backends/execution_backend.hpp"

namespace chorus {

// Where agents connect: `chorus agent --connect <endpoint> --keys <key_dir>`.
struct AgentInvitation {
  std::string endpoint;
  std::string key_dir;
  std::size_t count = 0;  // agents awaited
};

// How a site brings its agents up and down. Called from the thread that starts and stops the
// backend.
class AgentStarter {
 public:
  virtual ~AgentStarter() = default;
  // Starts the agents (without waiting for them to register). A non-ok Status ends start().
  virtual Status start(const AgentInvitation& invitation) = 0;
  // Polled (every 100 ms at least) while the agents register: a non-ok Status (what starts
  // them has died) ends the wait at once instead of at agent_wait.
  virtual Status check() { return {}; }
  // After the agents were told to exit: ends what start() started, bounded.
  virtual void stop() {}
  // What the site's machinery printed (its last `max_lines` lines), for a report on failure.
  virtual std::string output_tail(int /*max_lines*/) const { return {}; }
};

// Attempts lost with their node's agent, queued again per task without using its retries.
inline constexpr std::uint32_t kAgentsLostRequeues = 3;

struct AgentsBackendOptions {
  // Wait for `count` agents of any (distinct) names; or, when `nodes` is given, for one agent on
  // each of these nodes (one key pair each, bound to its name). A node given with cores keeps
  // its capacity (a Slurm allocation's share of it); one without takes what its agent reports.
  std::size_t count = 0;
  std::vector<NodeInfo> nodes;
  std::string listen = "tcp://127.0.0.1:*";           // tcp://IP:PORT; PORT * = any free port
  Duration agent_timeout = std::chrono::seconds(10);  // silence after which either side gives up
  Duration agent_wait = std::chrono::minutes(2);      // how long start() waits for registrations
  Duration kill_grace = std::chrono::seconds(5);      // agents' SIGTERM -> SIGKILL
  int function_threads = 0;                           // 0 = this machine's cores
  // Called once the endpoint listens and the keys are written, before the wait.
  std::function<void(const AgentInvitation&)> on_listening;
  // Called when the last live agent is lost during a run (why: which agent, how).
  std::function<void(const std::string& why)> on_all_lost;
  std::unique_ptr<AgentStarter> starter;  // null: the agents are started by someone else
  std::unique_ptr<Launcher> mpi;          // null: mpirun on this machine
  std::string name = "agents";            // the backend's name() (a site's factory sets its own)
};

class AgentsBackend final : public ExecutionBackend {
 public:
  explicit AgentsBackend(AgentsBackendOptions options);
  ~AgentsBackend() override;

  std::string_view name() const override { return options_.name; }
  // Errors: "cannot start the agents' endpoint: ..." (keys, bind), "cannot start the agents:
  // ..." (the starter), and those of AgentLauncher::wait_for_nodes / wait_for_count (agents
  // missing after agent_wait: unavailable; cancelled; what the starter's check() returned).
  Status start(const BackendStart& how) override;
  void stop() override;
  LauncherTable launchers() override;
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const override;
  NodeFactsSource* facts_source() override { return facts_.get(); }
  std::uint32_t lost_requeues() const override { return kAgentsLostRequeues; }

  // The coordinator's side of the agents, between start() and stop() (else null): for status
  // output and tests.
  AgentLauncher* agents() const { return launcher_.get(); }
  // The starter's output_tail().
  std::string site_output(int max_lines) const override;

 private:
  AgentsBackendOptions options_;
  InprocLauncher functions_;
  std::unique_ptr<Launcher> mpi_;
  std::unique_ptr<AgentLauncher> launcher_;
  std::unique_ptr<Launcher> bound_mpi_;  // mpi_, ended with its nodes' agents (between start/stop)
  std::vector<NodeInfo> nodes_;
  std::unique_ptr<AgentFacts> facts_;  // between start() and stop()
  bool starter_running_ = false;
};

// Agents started by hand: `count` of them, connecting to `listen`.
std::unique_ptr<AgentsBackend> make_agents_backend(AgentsBackendOptions options);

// A backend over an AgentLauncher the caller started and whose agents it waited for itself
// (tests and programs that drive the AgentLauncher directly): executable tasks and services on
// it, at `nodes`, lost nodes kept out of placement; functions and MPI as on the local backend.
// start() and stop() do nothing: the caller owns the agents. `agents` must outlive the backend.
// Its facts_source() is an AgentFacts over `agents`, as for the backend above.
std::unique_ptr<ExecutionBackend> attach_agents_backend(
    AgentLauncher& agents, std::vector<NodeInfo> nodes,
    Duration kill_grace = std::chrono::seconds(5), int function_threads = 0);

}  // namespace chorus
