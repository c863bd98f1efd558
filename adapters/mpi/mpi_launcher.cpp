#include "adapters/mpi/mpi_launcher.hpp"

#include <algorithm>
#include <fstream>

namespace chorus {

MpiLauncher::MpiLauncher(std::unique_ptr<MpiCommand> command, LocalLauncherOptions options)
    : StarterLauncher(options), command_(std::move(command)) {}

Result<TaskSpec> MpiLauncher::rewrite(const LaunchRequest& request) const {
  const TaskSpec& spec = *request.spec;
  if (spec.kind != TaskKind::mpi) {
    return invalid_argument("task '" + spec.name + "' is not an MPI task");
  }
  if (spec.ranks < 1) {
    return invalid_argument("task '" + spec.name + "' asks for " + std::to_string(spec.ranks) +
                            " ranks; an MPI task needs at least 1");
  }
  TaskSpec starter = spec;
  starter.kind = TaskKind::executable;
  int spread_ranks = 0;
  for (const auto& w : request.spread) spread_ranks += w.ranks;
  if (!request.spread.empty() && spread_ranks != spec.ranks) {
    return invalid_argument("task '" + spec.name + "' was placed with " +
                            std::to_string(spread_ranks) + " ranks across nodes but has " +
                            std::to_string(spec.ranks));
  }
  starter.cmd.argv = request.spread.empty()
                         ? command_->argv(spec, {NodeRanks{request.node, spec.ranks}})
                         : command_->argv(spec, request.spread);
  starter.cmd.shell.clear();
  // The starter's settings go under the task's own: a variable the task's `env:` sets wins (the
  // launcher applies the last value of a name).
  for (auto& kv : command_->env()) {
    const bool own = std::any_of(spec.env.begin(), spec.env.end(),
                                 [&](const auto& e) { return e.first == kv.first; });
    if (!own) starter.env.push_back(std::move(kv));
  }
  return starter;
}

void MpiLauncher::explain_failure(StateUpdate& update, const std::string& stderr_path) const {
  if (stderr_path.empty()) return;
  std::string why = describe_mpi_failure(stderr_path);
  if (!why.empty()) update.message = why + " (" + update.message + ")";
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
