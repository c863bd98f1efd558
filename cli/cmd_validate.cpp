// chorus validate FILE: read and check a workflow without running it.
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/live_plan.hpp"
#include "cli/output/output.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("validate", "Check a workflow file without running it");
  struct Args {
    std::string file;
    bool oversubscribe = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("file", args->file, "The workflow file (YAML)")->required();
  cmd->add_flag("--oversubscribe", args->oversubscribe,
                "Accept tasks that need more cores than this machine has");
  cmd->callback([args] {
    const Output out = Output::for_command(false);
    auto graph = load_workflow_for_cli(args->file, args->oversubscribe);
    if (!graph.ok()) {
      out.error(graph.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    // A planner (`scheduler: {planner: ...}`) needs every task's runtime, as `chorus run` does.
    if (Status st = check_plan_estimates(*graph, args->file); !st.ok()) {
      out.error(st.message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    ValidationReport report{args->file, graph->name, graph->tasks.size(), 0};
    for (const auto& t : graph->tasks) report.dependencies += t.after.size();
    out.validation(report);
  });
}

const CommandRegistrar registrar{"validate", add_validate_command};

}  // namespace
}  // namespace chorus::cli
