// SrunAgentStep: the AgentStarter of a Slurm allocation — ONE srun step that starts an agent on
// every node (`chorus agent --connect ...`), in its own process group, its output in a file
// beside the key folder (<key_dir>.log).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/local/local_launcher.hpp"
#include "runtime/backends/agents_backend.hpp"

namespace chorus {

// The step's command line. --overlap: the agents share their CPUs with later steps (MPI tasks'
// srun --mpi=pmix), which otherwise would wait for CPUs the agents hold. --no-kill: a node that
// fails takes its own agent down, not the whole step (the job itself needs sbatch --no-kill to
// outlive a failed node). `timeout` is the agents' --timeout; `node_logs` their --node-logs
// (%n expanded by each agent with its own node name; empty: none).
std::vector<std::string> agent_step_argv(std::size_t nodes, const std::string& chorus,
                                         const std::string& endpoint, const std::string& key_dir,
                                         const std::string& timeout, const std::string& node_logs);

class SrunAgentStep final : public AgentStarter {
 public:
  // `chorus`: the chorus executable the step runs on each node (this process's own when empty).
  SrunAgentStep(std::size_t nodes, std::string chorus, std::string timeout, std::string node_logs,
                Duration kill_grace);
  Status start(const AgentInvitation& invitation) override;
  // Errors: unavailable when the step has ended ("the srun step that starts the agents ended
  // (exited with code 1): <its last lines>").
  Status check() override;
  // Waits up to 10 s for the step to end by itself (its agents were told to exit), then kills it.
  void stop() override;
  std::string output_tail(int max_lines) const override;

 private:
  std::size_t nodes_;
  std::string chorus_;
  std::string timeout_;
  std::string node_logs_;
  Duration kill_grace_;
  std::unique_ptr<LocalLauncher> local_;  // between start() and stop()
  std::vector<StateUpdate> done_;
  TaskSpec spec_;
  std::string log_path_;
};

}  // namespace chorus
