// chorus: the command-line entry point. Subcommands live in cmd_*.cpp, one file each.
#include <cstdio>

#include "cli/command.hpp"

namespace chorus {
const char* version();
}

int main(int argc, char** argv) {
  CLI::App app{"chorus: workflows of MPI jobs, services and tasks, scheduled and journaled"};
  app.set_version_flag("--version", chorus::version());
  app.require_subcommand(1);
  for (auto& [name, add] : chorus::cli::registered_commands()) add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
