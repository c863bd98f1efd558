// StarterLauncher: a Launcher that runs each task through a starter command (mpirun, srun, ...)
// on a LocalLauncher of its own, so starters get the same process groups, output files, timeouts
// and cancellation as plain processes. A subclass says how a task's command is rewritten, and may
// improve the message of a failed task from its output.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "adapters/launcher.hpp"
#include "adapters/local/local_launcher.hpp"

namespace chorus {

class StarterLauncher : public Launcher {
 public:
  explicit StarterLauncher(LocalLauncherOptions options) : local_(options) {}

  // Errors: those of rewrite(), then those of LocalLauncher::launch.
  Result<LaunchHandle> launch(const LaunchRequest& request) final;
  void poll(std::vector<StateUpdate>& out) final;
  Status cancel(LaunchHandle handle) final { return local_.cancel(handle); }
  int wait_fd() const final { return local_.wait_fd(); }
  std::optional<TimePoint> next_deadline() const final { return local_.next_deadline(); }
  std::size_t in_flight() const final { return local_.in_flight(); }
  // The starter's group (mpirun, srun): what a resume kills on this host.
  std::optional<ProcessGroup> process_group(LaunchHandle handle) const final {
    return local_.process_group(handle);
  }

 protected:
  // The executable task to run in place of request.spec (a copy with the starter's argv and
  // environment). Errors refuse the launch (invalid_argument for a task this launcher cannot run).
  virtual Result<TaskSpec> rewrite(const LaunchRequest& request) const = 0;
  // Called with each final update of a failed task; `stderr_path` is where its stderr went.
  virtual void explain_failure(StateUpdate& /*update*/, const std::string& /*stderr_path*/) const {}

 private:
  struct Running {
    std::unique_ptr<TaskSpec> spec;  // LocalLauncher reads it by pointer until the final update
    std::string stderr_path;
  };
  LocalLauncher local_;
  std::map<std::pair<TaskId, std::uint32_t>, Running> running_;  // by (task, attempt)
};

}  // namespace chorus
