#include "adapters/slurm/allocation.hpp"

#include <charconv>
#include <cstdlib>

#include "adapters/slurm/cpus_per_node.hpp"
#include "adapters/slurm/hostlist.hpp"

namespace chorus {
namespace {

Status bad_variable(const std::string& name, const std::string& value, const std::string& why) {
  return invalid_argument(name + "='" + value + "': " + why);
}

Result<std::string> required(const EnvLookup& env, const std::string& name) {
  auto v = env(name);
  if (!v) return invalid_argument(name + " is not set (Slurm sets it in every job allocation)");
  return *v;
}

bool parse_whole(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

Result<SlurmAllocation> read_slurm_allocation(const EnvLookup& env) {
  auto job_id = env("SLURM_JOB_ID");
  if (!job_id) {
    return invalid_argument(
        "not inside a Slurm allocation: SLURM_JOB_ID is not set (use sbatch or salloc)");
  }
  std::int64_t id = 0;
  if (!parse_whole(*job_id, id) || id <= 0) {
    return bad_variable("SLURM_JOB_ID", *job_id, "expected a positive job number");
  }
  auto nodelist = required(env, "SLURM_JOB_NODELIST");
  if (!nodelist.ok()) return nodelist.status();
  auto cpus_text = required(env, "SLURM_JOB_CPUS_PER_NODE");
  if (!cpus_text.ok()) return cpus_text.status();

  auto hosts = expand_hostlist(*nodelist);
  if (!hosts.ok()) return bad_variable("SLURM_JOB_NODELIST", *nodelist, hosts.status().message());
  if (hosts->empty()) return bad_variable("SLURM_JOB_NODELIST", *nodelist, "no nodes");
  auto cpus = parse_cpus_per_node(*cpus_text);
  if (!cpus.ok()) {
    return bad_variable("SLURM_JOB_CPUS_PER_NODE", *cpus_text, cpus.status().message());
  }
  if (cpus->size() != hosts->size()) {
    return invalid_argument("SLURM_JOB_NODELIST='" + *nodelist + "' names " +
                            std::to_string(hosts->size()) + " nodes but SLURM_JOB_CPUS_PER_NODE='" +
                            *cpus_text + "' gives CPU counts for " + std::to_string(cpus->size()));
  }

  // Memory: per node, or per CPU times the node's CPUs. Slurm writes plain MB.
  std::int64_t mem_per_node = 0;
  std::int64_t mem_per_cpu = 0;
  for (auto [name, target] : {std::pair{"SLURM_MEM_PER_NODE", &mem_per_node},
                              std::pair{"SLURM_MEM_PER_CPU", &mem_per_cpu}}) {
    if (auto v = env(name)) {
      if (!parse_whole(*v, *target) || *target < 0) {
        return bad_variable(name, *v, "expected a memory size in MB");
      }
    }
  }

  SlurmAllocation a;
  a.job_id = *job_id;
  a.nodelist = *nodelist;
  a.nodes.reserve(hosts->size());
  for (std::size_t i = 0; i < hosts->size(); ++i) {
    NodeInfo n;
    n.name = (*hosts)[i];
    n.capacity.cores = (*cpus)[i];
    n.capacity.memory_mb = mem_per_node > 0 ? mem_per_node : mem_per_cpu * (*cpus)[i];
    a.nodes.push_back(std::move(n));
  }
  return a;
}

Result<SlurmAllocation> read_slurm_allocation() {
  return read_slurm_allocation([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace chorus
