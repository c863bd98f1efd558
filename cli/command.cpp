#include "cli/command.hpp"

#include <algorithm>

namespace chorus::cli {

std::vector<std::pair<std::string, AddCommand>>& registered_commands() {
  static std::vector<std::pair<std::string, AddCommand>> commands;
  return commands;
}

CommandRegistrar::CommandRegistrar(std::string name, AddCommand add) {
  auto& all = registered_commands();
  all.emplace_back(std::move(name), std::move(add));
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

}  // namespace chorus::cli
