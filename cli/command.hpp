// How a `chorus` subcommand plugs in: one file per subcommand defines a function that adds it to
// the CLI11 app, and registers that function with a static CommandRegistrar.
//
//   static const CommandRegistrar reg{"validate", add_validate_command};
//
// A subcommand prints through its Output (cli/output/output.hpp) and reports failure by throwing
// CLI::RuntimeError(exit_code, cli/exit_status.hpp) from its callback after Output::error;
// main() turns that into the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace chorus::cli {

using AddCommand = std::function<void(CLI::App& app)>;

struct CommandRegistrar {
  CommandRegistrar(std::string name, AddCommand add);
};

// All registered commands, sorted by name (so `chorus --help` lists them alphabetically).
std::vector<std::pair<std::string, AddCommand>>& registered_commands();

}  // namespace chorus::cli
