#include "cli/workflow_input.hpp"

#include <climits>
#include <cstdio>
#include <filesystem>

#include "core/node_info.hpp"
#include "workflows/workflow_loader.hpp"

namespace chorus::cli {

Result<WorkflowGraph> load_workflow_for_cli(const std::string& path, bool oversubscribe) {
  WorkflowLoadOptions options;
  std::error_code ec;
  options.base_dir = std::filesystem::current_path(ec).string();
  options.largest_node = local_node_info().capacity;
  if (oversubscribe) options.largest_node.cores = INT_MAX / 4;
  return load_workflow_file(path, options);
}

void print_error(const std::string& message) {
  // Diagnostics already start with "path:line:col:"; other messages get the program's name.
  bool located = message.find(": ") != std::string::npos && message.find(':') < message.find(' ');
  std::fprintf(stderr, "%s%s\n", located ? "" : "chorus: ", message.c_str());
}

}  // namespace chorus::cli
