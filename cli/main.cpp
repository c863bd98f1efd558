// chorus: the command-line entry point. Subcommands live in cmd_*.cpp, one file each.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cli/command.hpp"
#include "cli/workflow_input.hpp"
#include "core/text.hpp"

namespace chorus {
const char* version();
}

int main(int argc, char** argv) {
  CLI::App app{"chorus: workflows of MPI jobs, services and tasks, scheduled and journaled"};
  app.set_version_flag("--version", chorus::version());
  app.require_subcommand(1);
  std::vector<std::string> names;
  for (auto& [name, add] : chorus::cli::registered_commands()) {
    add(app);
    names.push_back(name);
  }
  // A mistyped command reads better as that than as CLI11's "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::fprintf(stderr, "chorus: unknown command '%s'%s; commands: %s\n", argv[1],
                 chorus::did_you_mean(argv[1], names).c_str(), chorus::join(names).c_str());
    return chorus::cli::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own exit status; it printed its message
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, the version, or the usage error
    return code == 0 ? 0 : chorus::cli::kExitBadInput;
  }
  return 0;
}
