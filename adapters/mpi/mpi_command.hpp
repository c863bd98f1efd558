// MpiCommand: how an MPI task's processes are started — the one piece that differs between
// running MPI here (mpirun) and inside a Slurm allocation (srun --mpi=pmix on chosen nodes).
#pragma once

#include <string>
#include <vector>

#include "core/task_spec.hpp"

namespace chorus {

class MpiCommand {
 public:
  virtual ~MpiCommand() = default;
  // The argv that starts spec.ranks processes of spec's command (argv, or /bin/sh -c for a
  // shell string), each given spec.per_rank.cores cores.
  virtual std::vector<std::string> argv(const TaskSpec& spec) const = 0;
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
  std::vector<std::string> argv(const TaskSpec& spec) const override;
  KeyValues env() const override;

 private:
  std::string mpirun_;
  std::vector<std::string> extra_args_;
};

}  // namespace chorus
