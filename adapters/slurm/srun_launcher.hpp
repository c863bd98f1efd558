// SrunLauncher: runs executable tasks inside a Slurm allocation, each as one `srun` step on the
// node placement chose (LaunchRequest::node), through a LocalLauncher of its own — so steps get
// the same output files, timeouts and cancellation (SIGTERM to srun, which forwards it to the
// step) as local processes.
//
// One step per task costs slurmctld a request each (srun peaks near 150 steps/s); this is the
// thin path until agents dispatch fine-grained tasks (issue 6).
#pragma once

#include <string>
#include <vector>

#include "adapters/local/starter_launcher.hpp"

namespace chorus {

// The srun command line that runs `spec` as one step of one task on `node` with the task's
// cores (and memory, when it asks for some): a shell command runs as `/bin/sh -c`.
std::vector<std::string> srun_step_argv(const TaskSpec& spec, const std::string& node,
                                        const std::string& srun = "srun");

class SrunLauncher final : public StarterLauncher {
 public:
  explicit SrunLauncher(LocalLauncherOptions options = {}, std::string srun = "srun");
  std::string_view name() const override { return "srun"; }

 private:
  // Errors: invalid_argument for a task that is not an executable with a command, or a request
  // without a node.
  Result<TaskSpec> rewrite(const LaunchRequest& request) const override;

  std::string srun_;
};

}  // namespace chorus
