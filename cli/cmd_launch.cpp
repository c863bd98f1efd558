// chorus launch FILE [--resume [RUN]]: run a workflow INSIDE a Slurm allocation, across its nodes.
// Placement sees the allocation's nodes; executable tasks run as `srun` steps on the node chosen,
// MPI tasks as `srun --mpi=pmix` steps on one node, function tasks in this process.
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "adapters/mpi/mpi_launcher.hpp"
#include "adapters/slurm/allocation.hpp"
#include "adapters/slurm/srun_launcher.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/progress_printer.hpp"
#include "cli/run_common.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

using LaunchArgs = CommonRunArgs;

int launch_command(LaunchArgs a) {
  auto alloc = read_slurm_allocation();
  if (!alloc.ok()) {
    if (std::getenv("SLURM_JOB_ID") == nullptr) {
      print_error(
          "chorus launch runs inside a Slurm allocation (SLURM_JOB_ID is not set); use chorus run "
          "here or chorus submit --slurm");
    } else {
      print_error("cannot read the Slurm allocation: " + alloc.status().message());
    }
    return kExitBadInput;
  }
  auto grace = prepare_run(a, "chorus launch");
  if (!grace) return kExitBadInput;
  Resources largest;
  for (const auto& n : alloc->nodes) {
    largest.cores = std::max(largest.cores, n.capacity.cores);
    largest.memory_mb = std::max(largest.memory_mb, n.capacity.memory_mb);
    largest.gpus = std::max(largest.gpus, n.capacity.gpus);
  }
  auto graph = load_workflow_for_cli(a.file, largest, "the largest node of this allocation");
  if (!graph.ok()) {
    print_error(graph.status().message());
    return kExitBadInput;
  }
  LocalLauncherOptions local{*grace};
  SrunLauncher srun(local);
  MpiLauncher mpi(std::make_unique<SrunMpiCommand>(), local);
  RunOptions options;
  options.nodes = alloc->nodes;
  options.executable_launcher = &srun;
  options.mpi_launcher = &mpi;
  return run_and_report(a, *grace, *graph, std::move(options), "chorus launch");
}

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "launch", "Run a workflow across the nodes of the Slurm allocation this runs in");
  auto a = std::make_shared<LaunchArgs>();
  add_common_run_options(cmd, a);
  cmd->callback([a, cmd] {
    note_resume(cmd, *a);
    int code = launch_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"launch", add_launch_command};

}  // namespace
}  // namespace chorus::cli
