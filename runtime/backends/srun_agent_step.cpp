#include "runtime/backends/srun_agent_step.hpp"

#include <unistd.h>

#include <filesystem>

#include "core/file_tail.hpp"
#include "core/self_executable.hpp"

namespace chorus {

std::vector<std::string> agent_step_argv(std::size_t nodes, const std::string& chorus,
                                         const std::string& endpoint, const std::string& key_dir,
                                         const std::string& timeout, const std::string& node_logs) {
  const std::string n = std::to_string(nodes);
  std::vector<std::string> argv = {"srun",
                                   "--overlap",
                                   "--nodes=" + n,
                                   "--ntasks=" + n,
                                   "--ntasks-per-node=1",
                                   "--cpus-per-task=1",
                                   "--kill-on-bad-exit=0",
                                   "--no-kill",
                                   "--quiet",
                                   "--job-name=chorus-agents",
                                   chorus,
                                   "agent",
                                   "--connect",
                                   endpoint,
                                   "--keys",
                                   key_dir,
                                   "--timeout",
                                   timeout};
  if (!node_logs.empty()) {
    argv.push_back("--node-logs");
    argv.push_back(node_logs);
  }
  return argv;
}

SrunAgentStep::SrunAgentStep(std::size_t nodes, std::string chorus, std::string timeout,
                             std::string node_logs, Duration kill_grace)
    : nodes_(nodes),
      chorus_(chorus.empty() ? self_executable() : std::move(chorus)),
      timeout_(std::move(timeout)),
      node_logs_(std::move(node_logs)),
      kill_grace_(kill_grace) {}

Status SrunAgentStep::start(const AgentInvitation& invitation) {
  spec_.name = "chorus-agents";
  spec_.id = 0;
  spec_.cmd.argv = agent_step_argv(nodes_, chorus_, invitation.endpoint, invitation.key_dir,
                                   timeout_, node_logs_);
  log_path_ = invitation.key_dir + ".log";
  LaunchRequest r;
  r.spec = &spec_;
  r.stdout_path = log_path_;
  r.stderr_path = log_path_;
  local_ = std::make_unique<LocalLauncher>(LocalLauncherOptions{kill_grace_});
  auto h = local_->launch(r);
  if (!h.ok()) return h.status();
  return {};
}

Status SrunAgentStep::check() {
  if (local_ == nullptr || local_->in_flight() == 0) return {};
  done_.clear();
  local_->poll(done_);
  if (done_.empty()) return {};
  const StateUpdate& u = done_.front();
  std::string how = u.message.empty() ? "exited with code 0" : u.message;
  std::string tail = file_tail(log_path_, 5);
  return Status(ErrorCode::unavailable, "the srun step that starts the agents ended (" + how + ")" +
                                            (tail.empty() ? "" : ": " + tail));
}

void SrunAgentStep::stop() {
  if (local_ == nullptr) return;
  std::vector<StateUpdate> done;
  for (int i = 0; i < 200 && local_->in_flight() > 0; ++i) {
    local_->poll(done);
    if (local_->in_flight() > 0) usleep(50 * 1000);
  }
  local_.reset();  // its destructor kills what is left
}

std::string SrunAgentStep::output_tail(int max_lines) const {
  return log_path_.empty() ? std::string() : file_tail(log_path_, max_lines);
}

}  // namespace chorus
