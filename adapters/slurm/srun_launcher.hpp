// SrunLauncher: runs executable tasks inside a Slurm allocation, each as one `srun` step on the
// node placement chose (LaunchRequest::node), through a LocalLauncher of its own — so steps get
// the same output files, timeouts and cancellation (SIGTERM to srun, which forwards it to the
// step) as local processes.
//
// One step per task costs slurmctld a request each (srun peaks near 150 steps/s); this is the
// thin path until agents dispatch fine-grained tasks (issue 6).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/launcher.hpp"
#include "adapters/local/local_launcher.hpp"

namespace chorus {

// The srun command line that runs `spec` as one step of one task on `node` with the task's
// cores (and memory, when it asks for some): a shell command runs as `/bin/sh -c`.
std::vector<std::string> srun_step_argv(const TaskSpec& spec, const std::string& node,
                                        const std::string& srun = "srun");

class SrunLauncher final : public Launcher {
 public:
  explicit SrunLauncher(LocalLauncherOptions options = {}, std::string srun = "srun");

  std::string_view name() const override { return "srun"; }
  // Errors: invalid_argument for a task that is not an executable with a command, or a request
  // without a node; otherwise those of LocalLauncher::launch ("srun: No such file or directory").
  Result<LaunchHandle> launch(const LaunchRequest& request) override;
  void poll(std::vector<StateUpdate>& out) override;
  Status cancel(LaunchHandle handle) override { return local_.cancel(handle); }
  int wait_fd() const override { return local_.wait_fd(); }
  std::optional<TimePoint> next_deadline() const override { return local_.next_deadline(); }
  std::size_t in_flight() const override { return local_.in_flight(); }

 private:
  std::string srun_;
  LocalLauncher local_;
  // The rewritten spec of each running step (LocalLauncher reads it by pointer until its final
  // update), keyed by (task, attempt) as updates are.
  std::map<std::pair<TaskId, std::uint32_t>, std::unique_ptr<TaskSpec>> running_;
};

}  // namespace chorus
