#include "core/node_info.hpp"

#include "core/host_name.hpp"

#include <sched.h>
#include <unistd.h>

namespace chorus {

NodeInfo local_node_info() {
  NodeInfo n;
  n.name = host_name();
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cores <= 0) cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  n.capacity.cores = cores > 0 ? cores : 1;
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  n.capacity.memory_mb =
      pages > 0 && page_size > 0 ? static_cast<std::int64_t>(pages) * page_size / (1024 * 1024) : 0;
  n.capacity.gpus = 0;
  return n;
}

}  // namespace chorus
