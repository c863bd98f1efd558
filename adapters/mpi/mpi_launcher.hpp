// MpiLauncher: runs MPI tasks (TaskKind::mpi) as one starter process (mpirun, srun, ...) per task,
// built by an MpiCommand, through a LocalLauncher of its own — so MPI jobs get the same process
// groups, output files, timeouts and cancellation as any executable task.
//
// The task fails when the starter exits non-zero, which Open MPI's mpirun does as soon as one rank
// does. The failure message then names the rank and its exit code (from mpirun's account in the
// task's stderr) and quotes the last lines the ranks wrote to stderr, without mpirun's banners.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "adapters/launcher.hpp"
#include "adapters/local/local_launcher.hpp"
#include "adapters/mpi/mpi_command.hpp"

namespace chorus {

// "rank 1 exited with code 3; stderr: <last lines>" from an Open MPI job's stderr file, or "".
std::string describe_mpi_failure(const std::string& stderr_path);

class MpiLauncher final : public Launcher {
 public:
  MpiLauncher(std::unique_ptr<MpiCommand> command, LocalLauncherOptions options = {});

  std::string_view name() const override { return "mpi"; }
  // Errors: invalid_argument for a task that is not kind mpi or has fewer than 1 rank; otherwise
  // those of LocalLauncher::launch (e.g. "mpirun: No such file or directory").
  Result<LaunchHandle> launch(const LaunchRequest& request) override;
  void poll(std::vector<StateUpdate>& out) override;
  Status cancel(LaunchHandle handle) override { return local_.cancel(handle); }
  int wait_fd() const override { return local_.wait_fd(); }
  std::optional<TimePoint> next_deadline() const override { return local_.next_deadline(); }
  std::size_t in_flight() const override { return local_.in_flight(); }

 private:
  std::unique_ptr<MpiCommand> command_;
  LocalLauncher local_;
  // The rewritten spec of each running task (LocalLauncher reads it by pointer until the end),
  // keyed by (task, attempt) as its updates are.
  struct Running {
    std::unique_ptr<TaskSpec> starter;
    std::string stderr_path;
  };
  std::map<std::pair<TaskId, std::uint32_t>, Running> running_;
};

}  // namespace chorus
