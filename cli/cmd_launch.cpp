// chorus launch FILE [--resume [RUN]]: run a workflow INSIDE a Slurm allocation, across its nodes.
// Placement sees the allocation's nodes; executable tasks run as `srun` steps on the node chosen,
// MPI tasks as `srun --mpi=pmix` steps on one node, function tasks in this process.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "adapters/mpi/mpi_launcher.hpp"
#include "adapters/slurm/allocation.hpp"
#include "adapters/slurm/srun_launcher.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/progress_printer.hpp"
#include "cli/run_common.hpp"
#include "cli/workflow_input.hpp"
#include "workflows/workflow_loader.hpp"

namespace chorus::cli {
namespace {

using LaunchArgs = CommonRunArgs;

// The workflow as `chorus run` reads it (policy names checked), but judged against the largest
// node of the allocation instead of this machine.
Result<WorkflowGraph> load_for_allocation(const std::string& path, const SlurmAllocation& alloc) {
  WorkflowLoadOptions options;
  std::error_code ec;
  options.base_dir = std::filesystem::current_path(ec).string();
  for (const auto& n : alloc.nodes) {
    options.largest_node.cores = std::max(options.largest_node.cores, n.capacity.cores);
    options.largest_node.memory_mb = std::max(options.largest_node.memory_mb, n.capacity.memory_mb);
    options.largest_node.gpus = std::max(options.largest_node.gpus, n.capacity.gpus);
  }
  options.machine_phrase = "the largest node of this allocation";
  auto graph = load_workflow_file(path, options);
  if (!graph.ok()) return graph;
  // Policy names and the rest of the CLI's checks (oversubscribe: cores were judged above).
  auto checked = load_workflow_for_cli(path, true);
  if (!checked.ok()) return checked.status();
  return graph;
}

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
  if (a.file.empty() && !a.resume_given) {
    print_error("give a workflow file: chorus launch wf.yaml");
    return kExitBadInput;
  }
  if (!resolve_resume(a.file, a.resume, a.resume_given, a.state_dir)) return kExitBadInput;
  auto grace = parse_duration(a.grace);
  if (!grace.ok()) {
    print_error("--grace: " + grace.status().message());
    return kExitBadInput;
  }
  auto graph = load_for_allocation(a.file, *alloc);
  if (!graph.ok()) {
    print_error(graph.status().message());
    return kExitBadInput;
  }

  CancelToken cancel;
  handle_interrupts(&cancel);
  OutputMode mode = pick_output_mode(a.json);
  ProgressPrinter printer(mode, a.resume.empty() ? graph->name : a.resume);

  LocalLauncherOptions local{*grace};
  SrunLauncher srun(local);
  MpiLauncher mpi(std::make_unique<SrunMpiCommand>(), local);
  RunOptions options;
  options.state_dir = a.state_dir;
  options.resume_run = a.resume;
  options.fail_fast = a.fail_fast;
  options.kill_grace = *grace;
  options.cancel = &cancel;
  options.observer = &printer;
  options.nodes = alloc->nodes;
  options.executable_launcher = &srun;
  options.mpi_launcher = &mpi;
  auto outcome = run_workflow(*graph, options);
  handle_interrupts(nullptr);
  return finish_run(outcome, mode, "chorus launch");
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
