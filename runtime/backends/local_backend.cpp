#include "runtime/backends/local_backend.hpp"

#include "adapters/inproc/inproc_launcher.hpp"
#include "adapters/local/local_launcher.hpp"
#include "adapters/mpi/mpi_launcher.hpp"
#include "runtime/backends/fixed_nodes_backend.hpp"

namespace chorus {
namespace {

class LocalBackend final : public FixedNodesBackend {
 public:
  explicit LocalBackend(const LocalBackendOptions& o)
      : FixedNodesBackend(o.nodes.empty() ? std::vector<NodeInfo>{local_node_info()} : o.nodes),
        processes_(LocalLauncherOptions{o.kill_grace}),
        functions_(function_pool_threads(o.function_threads)),
        mpi_(std::make_unique<MpirunCommand>(), LocalLauncherOptions{o.kill_grace}) {}

  std::string_view name() const override { return "local"; }
  LauncherTable launchers() override { return launcher_table(processes_, functions_, mpi_); }

 private:
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
