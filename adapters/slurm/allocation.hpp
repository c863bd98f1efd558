// The Slurm allocation this process runs in, read from the SLURM_* environment variables.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/status.hpp"

namespace chorus {

struct SlurmAllocation {
  std::string job_id;
  std::vector<NodeInfo> nodes;  // in SLURM_JOB_NODELIST order
  std::string nodelist;         // the expression as given, for srun -w
};

// Looks up one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads SLURM_JOB_ID, SLURM_JOB_NODELIST and SLURM_JOB_CPUS_PER_NODE (required), and
// SLURM_MEM_PER_NODE or SLURM_MEM_PER_CPU (optional, MB; NodeInfo::capacity.memory_mb stays 0 =
// not tracked without them). Each node gets its own CPU count.
// Errors (invalid_argument): SLURM_JOB_ID unset ("not inside a Slurm allocation"); a variable
// unset or malformed, naming the variable and quoting its value; a node list and a CPU list
// of different lengths.
Result<SlurmAllocation> read_slurm_allocation(const EnvLookup& env);

// The same from this process's environment (getenv).
Result<SlurmAllocation> read_slurm_allocation();

}  // namespace chorus
