// The local backend: everything runs on this machine — processes (LocalLauncher), functions on
// the in-process pool (InprocLauncher), MPI tasks through mpirun (MpiLauncher). What
// run_workflow uses when it is given no backend.
#pragma once

#include <memory>
#include <vector>

#include "core/units.hpp"
#include "runtime/backends/execution_backend.hpp"

namespace chorus {

struct LocalBackendOptions {
  // The nodes placement sees: empty = this machine (local_node_info()). One node with fewer or
  // more cores than the machine has is how `chorus run --cores N` hands out N cores.
  std::vector<NodeInfo> nodes;
  Duration kill_grace = std::chrono::seconds(5);  // SIGTERM -> SIGKILL on cancel and timeout
  int function_threads = 0;                       // the pool's threads; 0 = this machine's cores
};

// Needs no start() (it does nothing and cannot fail), but accepts one.
std::unique_ptr<ExecutionBackend> make_local_backend(const LocalBackendOptions& options = {});

// The pool size `function_threads` asks for (0 = this machine's cores).
unsigned function_pool_threads(int function_threads);

}  // namespace chorus
