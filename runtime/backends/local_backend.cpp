#include "runtime/backends/local_backend.hpp"

#include "adapters/inproc/inproc_launcher.hpp"
#include "adapters/local/local_launcher.hpp"
#include "adapters/mpi/mpi_launcher.hpp"

namespace chorus {
namespace {

class LocalBackend final : public ExecutionBackend {
 public:
  explicit LocalBackend(const LocalBackendOptions& o)
      : nodes_(o.nodes.empty() ? std::vector<NodeInfo>{local_node_info()} : o.nodes),
        processes_(LocalLauncherOptions{o.kill_grace}),
        functions_(function_pool_threads(o.function_threads)),
        mpi_(std::make_unique<MpirunCommand>(), LocalLauncherOptions{o.kill_grace}) {}

  std::string_view name() const override { return "local"; }
  Status start(const BackendStart&) override { return {}; }
  void stop() override {}
  LauncherTable launchers() override { return launcher_table(processes_, functions_, mpi_); }
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const override {
    return policy;
  }

 private:
  std::vector<NodeInfo> nodes_;
  LocalLauncher processes_;
  InprocLauncher functions_;
  MpiLauncher mpi_;
};

}  // namespace

unsigned function_pool_threads(int function_threads) {
  return static_cast<unsigned>(function_threads > 0 ? function_threads
                                                    : local_node_info().capacity.cores);
}

std::unique_ptr<ExecutionBackend> make_local_backend(const LocalBackendOptions& options) {
  return std::make_unique<LocalBackend>(options);
}

}  // namespace chorus
