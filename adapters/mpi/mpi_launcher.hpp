// MpiLauncher: runs MPI tasks (TaskKind::mpi) as one starter process (mpirun, srun, ...) per task,
// built by an MpiCommand (a StarterLauncher: process groups, output files, timeouts and
// cancellation as for any executable task).
//
// The task fails when the starter exits non-zero, which Open MPI's mpirun does as soon as one rank
// does. The failure message then names the rank and its exit code (from mpirun's account in the
// task's stderr) and quotes the last lines the ranks wrote to stderr, without mpirun's banners.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "adapters/local/starter_launcher.hpp"
#include "adapters/mpi/mpi_command.hpp"

namespace chorus {

// "rank 1 exited with code 3; stderr: <last lines>" from an Open MPI job's stderr file, or "".
std::string describe_mpi_failure(const std::string& stderr_path);

class MpiLauncher final : public StarterLauncher {
 public:
  MpiLauncher(std::unique_ptr<MpiCommand> command, LocalLauncherOptions options = {});
  std::string_view name() const override { return "mpi"; }

 private:
  // Errors: invalid_argument for a task that is not kind mpi or has fewer than 1 rank.
  Result<TaskSpec> rewrite(const LaunchRequest& request) const override;
  void explain_failure(StateUpdate& update, const std::string& stderr_path) const override;

  std::unique_ptr<MpiCommand> command_;
};

}  // namespace chorus
