#include "adapters/local/starter_launcher.hpp"

namespace chorus {

Result<LaunchHandle> StarterLauncher::launch(const LaunchRequest& request) {
  if (request.spec == nullptr) return invalid_argument("launch request without a task spec");
  auto rewritten = rewrite(request);
  if (!rewritten.ok()) return rewritten.status();
  auto spec = std::make_unique<TaskSpec>(std::move(*rewritten));
  LaunchRequest local_request = request;
  local_request.spec = spec.get();
  auto handle = local_.launch(local_request);
  if (handle.ok()) {
    running_[{request.spec->id, request.attempt}] = Running{std::move(spec), request.stderr_path};
  }
  return handle;
}

void StarterLauncher::poll(std::vector<StateUpdate>& out) {
  std::size_t first = out.size();
  local_.poll(out);
  for (std::size_t i = first; i < out.size(); ++i) {
    auto it = running_.find({out[i].task, out[i].attempt});
    if (it == running_.end()) continue;
    if (out[i].kind == UpdateKind::exited && !out[i].succeeded()) {
      explain_failure(out[i], it->second.stderr_path);
    }
    running_.erase(it);
  }
}

}  // namespace chorus
