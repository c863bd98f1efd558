#include "runtime/backends/slurm_backend.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "adapters/mpi/mpi_launcher.hpp"
#include "adapters/slurm/slurm_client.hpp"
#include "adapters/slurm/srun_launcher.hpp"
#include "core/host_name.hpp"
#include "runtime/backends/fixed_nodes_backend.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/backends/srun_agent_step.hpp"

namespace chorus {
namespace {

std::string ipv4_of(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return {};
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr, ip, sizeof ip);
  freeaddrinfo(res);
  return ip;
}

// Whether the allocation's nodes are virtual nodes of one host: Slurm gives them all the same
// NodeAddr (tests/slurm/cluster.sh: 127.0.0.1). One controller query, when the backend is made.
// A controller that does not answer counts as separate hosts: Open MPI then chooses its
// transports, as it does on a real cluster.
bool nodes_share_one_host(const std::vector<NodeInfo>& nodes) {
  if (nodes.size() < 2) return false;
  auto client = SlurmClient::open();
  if (!client.ok()) return false;
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.name);
  auto addresses = (*client)->node_addresses(names);
  if (!addresses.ok() || addresses->empty() || addresses->front().empty()) return false;
  return std::all_of(addresses->begin(), addresses->end(),
                     [&](const std::string& a) { return a == addresses->front(); });
}

std::unique_ptr<Launcher> srun_mpi(Duration kill_grace, bool one_host) {
  return std::make_unique<MpiLauncher>(std::make_unique<SrunMpiCommand>("srun", one_host),
                                       LocalLauncherOptions{kill_grace});
}

// Without agents: every executable task and service replica its own srun step.
class SrunStepsBackend final : public FixedNodesBackend {
 public:
  explicit SrunStepsBackend(const SlurmBackendOptions& o)
      : FixedNodesBackend(o.allocation.nodes),
        srun_(LocalLauncherOptions{o.kill_grace}),
        functions_(function_pool_threads(o.function_threads)),
        mpi_(srun_mpi(o.kill_grace, nodes_share_one_host(o.allocation.nodes))) {}
  std::string_view name() const override { return "slurm"; }
  LauncherTable launchers() override { return launcher_table(srun_, functions_, *mpi_); }

 private:
  SrunLauncher srun_;
  InprocLauncher functions_;
  std::unique_ptr<Launcher> mpi_;
};

// The agents' --timeout, in a form `chorus agent` parses back exactly.
std::string duration_argument(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

}  // namespace

std::string allocation_interface(const std::vector<NodeInfo>& nodes) {
  std::string self = ipv4_of(host_name());
  for (const auto& n : nodes) {
    std::string peer = ipv4_of(n.name);
    if (peer.empty() || peer == self) continue;
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    inet_pton(AF_INET, peer.c_str(), &to.sin_addr);
    sockaddr_in from{};
    socklen_t len = sizeof from;
    std::string ip;
    // A UDP connect sends nothing: it only asks the kernel which source address it would use.
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) == 0) {
      char buf[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &from.sin_addr, buf, sizeof buf);
      ip = buf;
    }
    ::close(fd);
    if (!ip.empty()) return ip;
    break;
  }
  return self.empty() ? "127.0.0.1" : self;
}

std::unique_ptr<ExecutionBackend> make_slurm_backend(SlurmBackendOptions options) {
  if (!options.agents) return std::make_unique<SrunStepsBackend>(options);
  AgentsBackendOptions ao;
  ao.nodes = options.allocation.nodes;
  ao.listen = !options.listen.empty()
                  ? options.listen
                  : "tcp://" + allocation_interface(options.allocation.nodes) + ":*";
  ao.agent_timeout = options.agent_timeout;
  ao.agent_wait = options.agent_wait;
  ao.kill_grace = options.kill_grace;
  ao.function_threads = options.function_threads;
  ao.on_all_lost = std::move(options.on_all_lost);
  ao.starter = std::make_unique<SrunAgentStep>(options.allocation.nodes.size(), options.chorus,
                                               duration_argument(options.agent_wait),
                                               options.node_logs, options.kill_grace);
  ao.mpi = srun_mpi(options.kill_grace, nodes_share_one_host(options.allocation.nodes));
  ao.name = "slurm";
  return make_agents_backend(std::move(ao));
}

}  // namespace chorus
