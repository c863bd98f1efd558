// chorus endpoints RUN: where the services of a run listen (from the journal, or a served
// instance's), one line per replica, or --env for the CHORUS_SERVICE_<NAME> lines a task using
// them receives (cli/service_endpoints.hpp).
#include "cli/command.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "cli/service_endpoints.hpp"

namespace chorus::cli {
namespace {

void add_endpoints_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("endpoints", "Print where a run's services listen");
  struct Args {
    std::string run;
    std::string state_dir;
    std::string server;
    bool env = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id (or 'latest')")->required();
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_option("--server", a->server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->add_flag("--env", a->env,
                "Print CHORUS_SERVICE_<NAME>=endpoints for the services ready now, as tasks get "
                "them");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    if (auto server = chosen_server(a->server, a->state_dir)) {
      call_server(*server, {{"op", "endpoints"}, {"run", a->run}, {"env", a->env}}, false);
      return;
    }
    auto [store, run] = open_run_or_exit(a->state_dir, a->run);
    run.status = effective_status(run);
    print_endpoints(out, run, events_or_exit(*store, run), a->env);
  });
}

const CommandRegistrar registrar{"endpoints", add_endpoints_command};

}  // namespace
}  // namespace chorus::cli
