#include "runtime/backends/node_bound_launcher.hpp"

namespace chorus {

NodeBoundLauncher::NodeBoundLauncher(Launcher& inner, Liveness liveness)
    : inner_(inner), liveness_(std::move(liveness)), losses_seen_(liveness_.losses()) {}

const std::string* NodeBoundLauncher::first_lost(const std::vector<std::string>& nodes) const {
  for (const auto& n : nodes) {
    if (!liveness_.alive(n)) return &n;
  }
  return nullptr;
}

Result<LaunchHandle> NodeBoundLauncher::launch(const LaunchRequest& request) {
  Placed p;
  if (request.spread.empty()) {
    if (!request.node.empty()) p.nodes.push_back(request.node);
  } else {
    for (const auto& s : request.spread) p.nodes.push_back(s.node);
  }
  if (const std::string* lost = first_lost(p.nodes)) {
    return Status(ErrorCode::unavailable, "the agent on node " + *lost + " is lost");
  }
  auto handle = inner_.launch(request);
  if (!handle.ok()) return handle;
  p.handle = *handle;
  placed_[key(request.spec->id, request.attempt)] = std::move(p);
  return handle;
}

void NodeBoundLauncher::poll(std::vector<StateUpdate>& out) {
  if (const std::uint64_t losses = liveness_.losses(); losses != losses_seen_) {
    losses_seen_ = losses;
    for (auto& [k, p] : placed_) {
      if (!p.lost_message.empty()) continue;
      if (const std::string* lost = first_lost(p.nodes)) {
        p.lost_message =
            "lost: the agent on node " + *lost + " is lost and this task had ranks there (stopped)";
        (void)inner_.cancel(p.handle);
      }
    }
  }
  const std::size_t from = out.size();
  inner_.poll(out);
  for (std::size_t i = from; i < out.size(); ++i) {
    StateUpdate& u = out[i];
    auto it = placed_.find(key(u.task, u.attempt));
    if (it == placed_.end()) continue;
    // A stopped attempt that still succeeded keeps its success; any other end is the loss's.
    if (!it->second.lost_message.empty() && !u.succeeded()) {
      u.kind = UpdateKind::lost;
      u.signal = 0;
      u.exit_code = 0;
      u.message = std::move(it->second.lost_message);
    }
    placed_.erase(it);
  }
}

std::unique_ptr<Launcher> bound_to_agents(Launcher& mpi, const AgentLauncher& agents) {
  return std::make_unique<NodeBoundLauncher>(
      mpi, NodeBoundLauncher::Liveness{
               [&agents](std::string_view node) { return agents.node_alive(node); },
               [&agents] { return agents.losses(); }});
}

}  // namespace chorus
