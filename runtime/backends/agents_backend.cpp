#include "runtime/backends/agents_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "adapters/mpi/mpi_launcher.hpp"
#include "runtime/agent/live_node_placement.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/backends/node_bound_launcher.hpp"

namespace chorus {
namespace {

std::unique_ptr<Launcher> local_mpi(Duration kill_grace) {
  return std::make_unique<MpiLauncher>(std::make_unique<MpirunCommand>(),
                                       LocalLauncherOptions{kill_grace});
}

std::unique_ptr<PlacementPolicy> wrap_live(std::unique_ptr<PlacementPolicy> policy,
                                           const AgentLauncher* agents) {
  return live_nodes_only(std::move(policy),
                         [agents](std::string_view node) { return agents->node_alive(node); });
}

// A fresh key folder per coordinator process: two runs in one state folder never share keys.
std::string key_dir_in(const std::string& state_dir) {
  std::error_code ec;
  std::string base = state_dir.empty() ? (std::filesystem::current_path(ec) / ".chorus").string()
                                       : std::filesystem::absolute(state_dir, ec).string();
  return base + "/agents/" + std::to_string(::getpid());
}

class AttachedAgents final : public ExecutionBackend {
 public:
  AttachedAgents(AgentLauncher& agents, std::vector<NodeInfo> nodes, Duration kill_grace,
                 int function_threads)
      : agents_(agents),
        nodes_(std::move(nodes)),
        functions_(function_pool_threads(function_threads)),
        mpi_(local_mpi(kill_grace)),
        bound_mpi_(bound_to_agents(*mpi_, agents_)),
        facts_(agents_, nodes_) {}
  std::string_view name() const override { return "agents"; }
  Status start(const BackendStart&) override { return {}; }
  void stop() override {}
  LauncherTable launchers() override { return launcher_table(agents_, functions_, *bound_mpi_); }
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const override {
    return wrap_live(std::move(policy), &agents_);
  }
  NodeFactsSource* facts_source() override { return &facts_; }
  std::uint32_t lost_requeues() const override { return kAgentsLostRequeues; }

 private:
  AgentLauncher& agents_;
  std::vector<NodeInfo> nodes_;
  InprocLauncher functions_;
  std::unique_ptr<Launcher> mpi_;
  std::unique_ptr<Launcher> bound_mpi_;
  AgentFacts facts_;
};

}  // namespace

AgentsBackend::AgentsBackend(AgentsBackendOptions options)
    : options_(std::move(options)),
      functions_(function_pool_threads(options_.function_threads)),
      mpi_(options_.mpi != nullptr ? std::move(options_.mpi) : local_mpi(options_.kill_grace)) {}

AgentsBackend::~AgentsBackend() {
  stop();
}

Status AgentsBackend::start(const BackendStart& how) {
  if (launcher_ != nullptr) return {};
  const Duration timeout = options_.agent_timeout;
  if (timeout <= Duration::zero()) return invalid_argument("the agent timeout must be positive");
  if (options_.count == 0 && options_.nodes.empty()) {
    return invalid_argument("the agents backend needs a number of agents or their nodes");
  }
  AgentLauncherOptions ao;
  ao.listen = options_.listen;
  ao.key_dir = key_dir_in(how.state_dir);
  ao.lost_after = timeout;
  ao.agent_silence = timeout;
  ao.heartbeat = std::min<Duration>(std::chrono::seconds(1), timeout / 4);
  ao.kill_grace = options_.kill_grace;
  std::vector<std::string> names;
  for (const auto& n : options_.nodes) names.push_back(n.name);
  // One key pair per agent: per node when the nodes are known, else `count` slots.
  if (!names.empty()) {
    ao.agent_nodes = names;
  } else {
    ao.agent_slots = options_.count;
  }
  CancelToken* cancel = how.cancel;
  ao.on_all_lost = [notify = options_.on_all_lost, cancel](const std::string& why) {
    if (notify) notify(why);
    if (cancel != nullptr) cancel->request();
  };
  auto launcher = AgentLauncher::start(ao);
  if (!launcher.ok()) {
    return Status(launcher.status().code(),
                  "cannot start the agents' endpoint: " + launcher.status().message());
  }
  launcher_ = std::move(*launcher);
  AgentInvitation invitation{launcher_->endpoint(), launcher_->key_dir(),
                             names.empty() ? options_.count : names.size()};
  if (options_.on_listening) options_.on_listening(invitation);
  AgentLauncher::WaitWatch watch;
  if (options_.starter != nullptr) {
    starter_running_ = true;
    if (Status s = options_.starter->start(invitation); !s.ok()) {
      stop();
      return Status(s.code(), "cannot start the agents: " + s.message());
    }
    watch = [s = options_.starter.get()] { return s->check(); };
  }
  auto registered =
      names.empty() ? launcher_->wait_for_count(options_.count, options_.agent_wait, cancel, watch)
                    : launcher_->wait_for_nodes(names, options_.agent_wait, cancel, watch);
  if (!registered.ok()) {
    stop();
    return registered.status();
  }
  if (names.empty()) {
    nodes_ = std::move(*registered);
  } else {
    // The given nodes, at the addresses their agents connected from (Slurm node names need not
    // resolve); a node given without cores takes what its agent reported.
    nodes_ = options_.nodes;
    for (auto& n : nodes_) {
      for (const auto& r : *registered) {
        if (r.name != n.name) continue;
        n.address = r.address;
        if (n.capacity.cores <= 0) n.capacity = r.capacity;
      }
    }
  }
  facts_ = std::make_unique<AgentFacts>(*launcher_, nodes_);
  bound_mpi_ = bound_to_agents(*mpi_, *launcher_);
  return {};
}

void AgentsBackend::stop() {
  facts_.reset();
  bound_mpi_.reset();
  if (launcher_ != nullptr) launcher_.reset();  // tells the agents to exit
  if (starter_running_) {
    starter_running_ = false;
    options_.starter->stop();
  }
  nodes_.clear();
}

LauncherTable AgentsBackend::launchers() {
  if (launcher_ == nullptr) return LauncherTable{};
  return launcher_table(*launcher_, functions_, *bound_mpi_);
}

std::unique_ptr<PlacementPolicy> AgentsBackend::wrap_placement(
    std::unique_ptr<PlacementPolicy> policy) const {
  return wrap_live(std::move(policy), launcher_.get());
}

std::string AgentsBackend::site_output(int max_lines) const {
  return options_.starter != nullptr ? options_.starter->output_tail(max_lines) : std::string();
}

std::unique_ptr<AgentsBackend> make_agents_backend(AgentsBackendOptions options) {
  return std::make_unique<AgentsBackend>(std::move(options));
}

std::unique_ptr<ExecutionBackend> attach_agents_backend(AgentLauncher& agents,
                                                        std::vector<NodeInfo> nodes,
                                                        Duration kill_grace, int function_threads) {
  return std::make_unique<AttachedAgents>(agents, std::move(nodes), kill_grace, function_threads);
}

}  // namespace chorus
