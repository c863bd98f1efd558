// MpiCommand: how an MPI task's processes are started — the one piece that differs between
// running MPI here (mpirun) and inside a Slurm allocation (srun --mpi=pmix on chosen nodes).
#pragma once

#include <string>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/task_spec.hpp"

namespace chorus {

class MpiCommand {
 public:
  virtual ~MpiCommand() = default;
  // The argv that starts spec.ranks processes of spec's command (argv, or /bin/sh -c for a
  // shell string), each given spec.per_rank.cores cores, where placement put them: `where` lists
  // the nodes in rank order with their rank counts (one entry when the task fits on one node).
  virtual std::vector<std::string> argv(const TaskSpec& spec,
                                        const std::vector<NodeRanks>& where) const = 0;
  // Environment the starter needs (added to the task's own).
  virtual KeyValues env() const = 0;
};

// mpirun (Open MPI) on this machine. Ranks count against the cores the scheduler handed out, so
// mpirun is told not to bind (--bind-to none) and to accept more ranks than it detects slots
// (--oversubscribe: the coordinator, not mpirun, enforces the core budget). As root it sets
// Open MPI's run-as-root confirmation variables.
class MpirunCommand final : public MpiCommand {
 public:
  explicit MpirunCommand(std::string mpirun = "mpirun", std::vector<std::string> extra_args = {});
  // One node: every rank here (it is this machine). Several: --host a:4,b:4 (mpirun reaches the
  // other hosts through its own launcher, ssh by default).
  std::vector<std::string> argv(const TaskSpec& spec,
                                const std::vector<NodeRanks>& where) const override;
  KeyValues env() const override;

 private:
  std::string mpirun_;
  std::vector<std::string> extra_args_;
};

}  // namespace chorus

namespace chorus {

// srun --mpi=pmix inside a Slurm allocation, on exactly the nodes and rank counts placement chose
// (several nodes: --distribution=arbitrary with the node list repeated once per rank).
// env() leaves Open MPI's transports to Open MPI and the site, except for virtual Slurm nodes that
// share one host (`nodes_share_one_host`, as tests/slurm/cluster.sh makes them): there the
// shared-memory transport collides across nodes and only loopback reaches the other "nodes", so
// it asks for TCP over lo, unless this process's environment already sets the variable (and
// MpiLauncher lets the task's own `env:` win over it too).
class SrunMpiCommand final : public MpiCommand {
 public:
  explicit SrunMpiCommand(std::string srun = "srun", bool nodes_share_one_host = false);
  // srun --mpi=pmix --nodes=K --ntasks=R --cpus-per-task=C --nodelist=... <command>
  std::vector<std::string> argv(const TaskSpec& spec,
                                const std::vector<NodeRanks>& where) const override;
  KeyValues env() const override;

 private:
  std::string srun_;
  bool nodes_share_one_host_ = false;
};

}  // namespace chorus
