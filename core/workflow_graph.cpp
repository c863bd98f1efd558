#include "core/workflow_graph.hpp"

#include <algorithm>
#include <unordered_set>

namespace chorus {

std::vector<std::vector<TaskId>> dependents_of(const WorkflowGraph& graph) {
  std::vector<std::vector<TaskId>> out(graph.tasks.size());
  for (const auto& t : graph.tasks) {
    for (TaskId d : t.after) {
      if (d < out.size()) out[d].push_back(t.id);
    }
  }
  return out;
}

Status validate_graph(const WorkflowGraph& graph) {
  const auto n = graph.tasks.size();
  std::unordered_set<std::string_view> names;
  names.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& t = graph.tasks[i];
    if (t.id != i) return internal_error("task '" + t.name + "' has a wrong id");
    if (t.name.empty()) return invalid_argument("task #" + std::to_string(i) + " has no name");
    if (!names.insert(t.name).second)
      return invalid_argument("duplicate task name '" + t.name + "'");
    for (TaskId d : t.after) {
      if (d >= n) return invalid_argument("task '" + t.name + "' depends on an unknown task");
      if (d == i) return invalid_argument("task '" + t.name + "' depends on itself");
    }
  }
  // Iterative DFS with colours; on a back edge, walk the parent chain to print the cycle.
  enum : std::uint8_t { white, grey, black };
  std::vector<std::uint8_t> colour(n, white);
  std::vector<TaskId> parent(n, kNoTask);
  std::vector<std::pair<TaskId, std::size_t>> stack;
  for (TaskId root = 0; root < n; ++root) {
    if (colour[root] != white) continue;
    stack.push_back({root, 0});
    colour[root] = grey;
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      const auto& deps = graph.tasks[u].after;
      if (next == deps.size()) {
        colour[u] = black;
        stack.pop_back();
        continue;
      }
      TaskId v = deps[next++];
      if (colour[v] == white) {
        colour[v] = grey;
        parent[v] = u;
        stack.push_back({v, 0});
      } else if (colour[v] == grey) {
        // u depends on v and v is on the stack: v -> ... -> u -> v in "depends on" order.
        std::vector<TaskId> cycle{v};
        for (TaskId w = u; w != v && w != kNoTask; w = parent[w]) cycle.push_back(w);
        cycle.push_back(v);
        std::string text;
        for (auto it = cycle.rbegin(); it != cycle.rend(); ++it) {
          if (!text.empty()) text += " -> ";
          text += graph.tasks[*it].name;
        }
        return invalid_argument("dependency cycle: " + text);
      }
    }
  }
  return {};
}

}  // namespace chorus
