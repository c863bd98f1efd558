#include "adapters/mpi/mpi_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace chorus {

MpirunCommand::MpirunCommand(std::string mpirun, std::vector<std::string> extra_args)
    : mpirun_(std::move(mpirun)), extra_args_(std::move(extra_args)) {}

std::vector<std::string> MpirunCommand::argv(const TaskSpec& spec,
                                             const std::vector<NodeRanks>& where) const {
  std::vector<std::string> out{mpirun_,           "-np",       std::to_string(spec.ranks),
                               "--oversubscribe", "--bind-to", "none"};
  if (where.size() > 1) {
    std::string hosts;
    for (const auto& w : where) {
      if (!hosts.empty()) hosts += ',';
      hosts += w.node + ':' + std::to_string(w.ranks);
    }
    out.insert(out.end(), {"--host", hosts});
  }
  if (spec.per_rank.cores > 1) {
    // Each rank may run per_rank.cores threads; tell Open MPI how many cores a rank owns.
    out.insert(out.end(), {"--map-by", "slot:PE=" + std::to_string(spec.per_rank.cores)});
  }
  out.insert(out.end(), extra_args_.begin(), extra_args_.end());
  if (spec.cmd.uses_shell()) {
    out.insert(out.end(), {"/bin/sh", "-c", spec.cmd.shell});
  } else {
    out.insert(out.end(), spec.cmd.argv.begin(), spec.cmd.argv.end());
  }
  return out;
}

KeyValues MpirunCommand::env() const {
  KeyValues env;
  if (geteuid() == 0) {
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  return env;
}

}  // namespace chorus

namespace chorus {

SrunMpiCommand::SrunMpiCommand(std::string srun, bool nodes_share_one_host)
    : srun_(std::move(srun)), nodes_share_one_host_(nodes_share_one_host) {}

std::vector<std::string> SrunMpiCommand::argv(const TaskSpec& spec,
                                              const std::vector<NodeRanks>& where) const {
  // One node: --nodelist=n1. Several: Slurm's arbitrary distribution reads the node list as one
  // entry per rank, in rank order ("n1,n1,n2"), which places exactly the counts placement chose.
  std::string nodelist;
  for (const auto& w : where) {
    for (int r = 0; r < (where.size() > 1 ? w.ranks : 1); ++r) {
      if (!nodelist.empty()) nodelist += ',';
      nodelist += w.node;
    }
  }
  std::vector<std::string> out{
      srun_,
      "--mpi=pmix",
      "--nodes=" + std::to_string(where.size()),
      "--ntasks=" + std::to_string(spec.ranks),
      "--cpus-per-task=" + std::to_string(std::max(1, spec.per_rank.cores)),
      "--nodelist=" + nodelist};
  if (where.size() > 1) out.push_back("--distribution=arbitrary");
  out.insert(out.end(),
             {"--exclusive", "--quiet", "--kill-on-bad-exit=1", "--job-name=" + spec.name});
  if (spec.per_rank.memory_mb > 0) {
    // --mem is per node: the most any one node holds.
    int most = 0;
    for (const auto& w : where) most = std::max(most, w.ranks);
    out.push_back("--mem=" + std::to_string(spec.per_rank.memory_mb * most) + "M");
  }
  if (spec.cmd.uses_shell()) {
    out.insert(out.end(), {"/bin/sh", "-c", spec.cmd.shell});
  } else {
    out.insert(out.end(), spec.cmd.argv.begin(), spec.cmd.argv.end());
  }
  return out;
}

KeyValues SrunMpiCommand::env() const {
  KeyValues env;
  if (geteuid() == 0) {
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  if (!nodes_share_one_host_) return env;
  // Set here, not by the site: a value the user or a module exported wins.
  for (const auto& [name, value] :
       {std::pair{"OMPI_MCA_btl", "self,tcp"}, std::pair{"OMPI_MCA_btl_tcp_if_include", "lo"},
        std::pair{"OMPI_MCA_oob_tcp_if_include", "lo"}}) {
    if (std::getenv(name) == nullptr) env.emplace_back(name, value);
  }
  return env;
}

}  // namespace chorus
