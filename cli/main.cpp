// chorus: the command-line entry point. Subcommands live in cmd_*.cpp, one file each.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
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
    chorus::cli::print_error(std::string("unknown command '") + argv[1] + "'" +
                             chorus::did_you_mean(argv[1], names) +
                             "; commands: " + chorus::join(names));
    return chorus::cli::kExitBadInput;
  }
  // No exception leaves main as an abort. Expected failures travel as Status and never get here;
  // what does is out of memory (an input too large for the memory this process may use) or a
  // programmer error. Both exit kExitError (3), like a journal I/O error: the same input can
  // succeed with more memory, so it is not reported as bad input (2). The stack is unwound
  // before the message is printed, so printing it does not need the memory that ran out.
  const char* command = argc > 1 ? argv[1] : "chorus";
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own exit status; it printed its message
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, the version, or the usage error
    return code == 0 ? 0 : chorus::cli::kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "chorus: out of memory while running '%s': the input needs more memory than "
                 "this process may use (ulimit -v, the job's memory limit)\n",
                 command);
    return chorus::cli::kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus: internal error while running '%s': %s (please report it)\n",
                 command, e.what());
    return chorus::cli::kExitError;
  } catch (...) {
    std::fprintf(stderr,
                 "chorus: internal error while running '%s': an exception of unknown type "
                 "(please report it)\n",
                 command);
    return chorus::cli::kExitError;
  }
  return 0;
}
