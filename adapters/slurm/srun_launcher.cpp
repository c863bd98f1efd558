#include "adapters/slurm/srun_launcher.hpp"

namespace chorus {

std::vector<std::string> srun_step_argv(const TaskSpec& spec, const std::string& node,
                                        const std::string& srun) {
  const Resources total = spec.total();
  std::vector<std::string> out{srun,
                               "--nodes=1",
                               "--ntasks=1",
                               "--cpus-per-task=" + std::to_string(std::max(1, total.cores)),
                               "--nodelist=" + node,
                               "--exclusive",
                               "--quiet",
                               "--kill-on-bad-exit=1",
                               "--job-name=" + spec.name};
  if (total.memory_mb > 0) out.push_back("--mem=" + std::to_string(total.memory_mb) + "M");
  if (spec.cmd.uses_shell()) {
    out.insert(out.end(), {"/bin/sh", "-c", spec.cmd.shell});
  } else {
    out.insert(out.end(), spec.cmd.argv.begin(), spec.cmd.argv.end());
  }
  return out;
}

SrunLauncher::SrunLauncher(LocalLauncherOptions options, std::string srun)
    : StarterLauncher(options), srun_(std::move(srun)) {}

Result<TaskSpec> SrunLauncher::rewrite(const LaunchRequest& request) const {
  const TaskSpec& spec = *request.spec;
  if (spec.kind != TaskKind::executable || spec.cmd.empty()) {
    return invalid_argument("task '" + spec.name +
                            "' is not an executable task with a command; srun runs only those");
  }
  if (request.node.empty()) {
    return invalid_argument("task '" + spec.name + "' has no node to run on (srun needs one)");
  }
  TaskSpec step = spec;
  step.cmd.argv = srun_step_argv(spec, request.node, srun_);
  step.cmd.shell.clear();
  return step;
}

}  // namespace chorus
