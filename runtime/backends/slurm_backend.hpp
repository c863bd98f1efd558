// The Slurm allocation backend (`chorus launch`, inside an sbatch/salloc job): placement sees the
// allocation's nodes; MPI tasks run as `srun --mpi=pmix` steps on the nodes chosen; function
// tasks in this process. Executable tasks and services run on one agent per node, all agents
// started by ONE srun step (SrunAgentStep) — or, with `agents = false`, each task as its own
// srun step (SrunLauncher).
#pragma once

#include <memory>
#include <string>

#include "adapters/slurm/allocation.hpp"
#include "runtime/backends/agents_backend.hpp"

namespace chorus {

struct SlurmBackendOptions {
  SlurmAllocation allocation;  // read_slurm_allocation()
  bool agents = true;          // false: one srun step per executable task
  // The address the agents connect to: default tcp://<this host's address on the allocation's
  // network>:* (the source address the kernel routes to another node of the allocation).
  std::string listen;
  std::string node_logs;  // agents keep task output on their node, here (%n = node name)
  std::string chorus;     // the chorus executable the agents' step runs; default: this process's
  Duration agent_timeout = std::chrono::seconds(10);
  Duration agent_wait = std::chrono::minutes(2);  // also the agents' own --timeout
  Duration kill_grace = std::chrono::seconds(5);
  int function_threads = 0;
  std::function<void(const std::string& why)> on_all_lost;  // see AgentsBackendOptions
};

// With agents: an AgentsBackend named "slurm". Errors of start(): those of AgentsBackend
// (the step's own: "cannot start the agents: ...", "the srun step that starts the agents ended
// (...)"); site_output() is the step's output.
std::unique_ptr<ExecutionBackend> make_slurm_backend(SlurmBackendOptions options);

// This host's address on the network the allocation's nodes reach it through (never a
// wildcard); what its name resolves to, else 127.0.0.1, when no other node resolves.
std::string allocation_interface(const std::vector<NodeInfo>& nodes);

}  // namespace chorus
