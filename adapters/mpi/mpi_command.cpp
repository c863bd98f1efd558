#include "adapters/mpi/mpi_command.hpp"

#include <unistd.h>

namespace chorus {

MpirunCommand::MpirunCommand(std::string mpirun, std::vector<std::string> extra_args)
    : mpirun_(std::move(mpirun)), extra_args_(std::move(extra_args)) {}

std::vector<std::string> MpirunCommand::argv(const TaskSpec& spec) const {
  std::vector<std::string> out{mpirun_,           "-np",       std::to_string(spec.ranks),
                               "--oversubscribe", "--bind-to", "none"};
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
