#include "adapters/mpi/mpi_launcher.hpp"

#include <fstream>

namespace chorus {

MpiLauncher::MpiLauncher(std::unique_ptr<MpiCommand> command, LocalLauncherOptions options)
    : command_(std::move(command)), local_(options) {}

Result<LaunchHandle> MpiLauncher::launch(const LaunchRequest& request) {
  if (request.spec == nullptr) return invalid_argument("launch request without a task spec");
  const TaskSpec& spec = *request.spec;
  if (spec.kind != TaskKind::mpi) {
    return invalid_argument("task '" + spec.name + "' is not an MPI task");
  }
  if (spec.ranks < 1) {
    return invalid_argument("task '" + spec.name + "' asks for " + std::to_string(spec.ranks) +
                            " ranks; an MPI task needs at least 1");
  }
  auto starter = std::make_unique<TaskSpec>(spec);
  starter->kind = TaskKind::executable;
  starter->cmd.argv = command_->argv(spec, request.node);
  starter->cmd.shell.clear();
  for (auto& kv : command_->env()) starter->env.push_back(std::move(kv));

  LaunchRequest rewritten = request;
  rewritten.spec = starter.get();
  auto handle = local_.launch(rewritten);
  if (handle.ok()) {
    running_[{spec.id, request.attempt}] = Running{std::move(starter), request.stderr_path};
  }
  return handle;
}

void MpiLauncher::poll(std::vector<StateUpdate>& out) {
  std::size_t first = out.size();
  local_.poll(out);
  for (std::size_t i = first; i < out.size(); ++i) {
    auto it = running_.find({out[i].task, out[i].attempt});
    if (it == running_.end()) continue;
    StateUpdate& u = out[i];
    if (u.kind == UpdateKind::exited && !u.succeeded() && !it->second.stderr_path.empty()) {
      std::string why = describe_mpi_failure(it->second.stderr_path);
      if (!why.empty()) u.message = why + " (" + u.message + ")";
    }
    running_.erase(it);
  }
}

std::string describe_mpi_failure(const std::string& stderr_path) {
  std::ifstream in(stderr_path);
  if (!in) return {};
  std::vector<std::string> own;  // lines outside mpirun's "-----" banner blocks
  std::string rank, code;
  bool in_banner = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("-----", 0) == 0) {
      in_banner = !in_banner;
      continue;
    }
    if (!in_banner) {
      if (!line.empty()) own.push_back(line);
      continue;
    }
    // "  Process name: [[13096,1],1]" and "  Exit code:    3" inside the banner.
    if (auto p = line.find("Process name: [["); p != std::string::npos) {
      auto close = line.rfind(']');
      auto comma = line.rfind(',', close);
      if (close != std::string::npos && comma != std::string::npos && comma < close) {
        rank = line.substr(comma + 1, close - comma - 1);
      }
    } else if (auto c = line.find("Exit code:"); c != std::string::npos) {
      code = line.substr(c + 10);
      code.erase(0, code.find_first_not_of(' '));
    }
  }
  std::string out;
  if (!rank.empty()) out = "rank " + rank + " exited" + (code.empty() ? "" : " with code " + code);
  if (!own.empty()) {
    std::size_t from = own.size() > 5 ? own.size() - 5 : 0;
    out += out.empty() ? "stderr: " : "; stderr: ";
    for (std::size_t i = from; i < own.size(); ++i) {
      if (i > from) out += " | ";
      out += own[i];
    }
  }
  return out;
}

}  // namespace chorus
