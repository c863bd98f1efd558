#include "core/workflow_graph.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>

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

namespace {

// The names of a graph's tasks, for the uniqueness check: open addressing over task indices in a
// power-of-two table at most half full, so a million-task graph costs one allocation rather
// than a node per name (std::unordered_set's), which was most of validate_graph's time
// (bench/function_tasks.py).
class NameSet {
 public:
  explicit NameSet(const std::vector<TaskSpec>& tasks) : tasks_(tasks) {
    std::size_t size = 16;
    while (size < 2 * tasks.size()) size *= 2;
    slots_.assign(size, kEmpty);
  }
  // False when a task of that name is in already.
  bool insert(std::uint32_t task) {
    const std::string_view name = tasks_[task].name;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = std::hash<std::string_view>{}(name)&mask;; i = (i + 1) & mask) {
      if (slots_[i] == kEmpty) {
        slots_[i] = task;
        return true;
      }
      if (tasks_[slots_[i]].name == name) return false;
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  const std::vector<TaskSpec>& tasks_;
  std::vector<std::uint32_t> slots_;
};

}  // namespace

Status validate_graph(const WorkflowGraph& graph) {
  const auto n = graph.tasks.size();
  const auto services = graph.services.size();
  NameSet names(graph.tasks);
  // One pass over the tasks (each TaskSpec is several cache lines).
  for (std::size_t i = 0; i < n; ++i) {
    const auto& t = graph.tasks[i];
    if (t.id != i) return internal_error("task '" + t.name + "' has a wrong id");
    if (t.name.empty()) return invalid_argument("task #" + std::to_string(i) + " has no name");
    if (!names.insert(static_cast<std::uint32_t>(i)))
      return invalid_argument("duplicate task name '" + t.name + "'");
    for (TaskId d : t.after) {
      if (d >= n) return invalid_argument("task '" + t.name + "' depends on an unknown task");
      if (d == i) return invalid_argument("task '" + t.name + "' depends on itself");
    }
    for (ServiceId u : t.uses) {
      if (u >= services) return invalid_argument("task '" + t.name + "' uses an unknown service");
    }
    if (t.kind == TaskKind::service ? t.service >= services : t.service != kNoService)
      return invalid_argument("task '" + t.name + "' is not a replica of a known service");
    for (SourceId s : {t.data.from, t.data.to}) {
      if (s != kNoSource && s >= graph.sources.size()) {
        return invalid_argument("task '" + t.name + "' moves data " +
                                (s == t.data.from ? "from" : "to") + " source #" +
                                std::to_string(s) + ", but the workflow declares " +
                                std::to_string(graph.sources.size()) + " source(s)");
      }
    }
  }
  for (std::size_t i = 0; i < graph.sources.size(); ++i) {
    const DataSource& s = graph.sources[i];
    if (s.name.empty())
      return invalid_argument("data source #" + std::to_string(i) + " has no name");
    if (s.port < 1 || s.port > 65535)
      return invalid_argument("data source '" + s.name + "' has port " + std::to_string(s.port) +
                              ", not in 1..65535");
    for (std::size_t j = 0; j < i; ++j) {
      if (graph.sources[j].name == s.name)
        return invalid_argument("duplicate data source '" + s.name + "'");
    }
  }
  for (std::size_t s = 0; s < services; ++s) {
    const auto& svc = graph.services[s];
    if (svc.replicas < 1 || svc.replica_tasks.size() != static_cast<std::size_t>(svc.replicas))
      return invalid_argument("service '" + svc.name + "' does not list its " +
                              std::to_string(svc.replicas) + " replica task(s)");
    for (std::size_t r = 0; r < svc.replica_tasks.size(); ++r) {
      TaskId id = svc.replica_tasks[r];
      if (id >= n || graph.tasks[id].service != s || graph.tasks[id].replica != static_cast<int>(r))
        return invalid_argument("service '" + svc.name + "' lists a task that is not its replica");
    }
  }
  for (const auto& g : graph.repeats) {
    if (g.gate >= n || !graph.tasks[g.gate].held)
      return invalid_argument("repeat group '" + g.name + "' has no held gate task");
    if (g.max_rounds < 1 || !g.expand || !g.until)
      return invalid_argument("repeat group '" + g.name + "' is incomplete");
  }
  if (auto cycle = find_cycle(graph); !cycle.empty()) {
    return invalid_argument("dependency cycle: " + describe_cycle(graph, cycle));
  }
  return {};
}

std::vector<TaskId> find_cycle(const WorkflowGraph& graph) {
  // Iterative DFS with colours; a grey successor closes a cycle made of the stack from it.
  const std::size_t n = graph.tasks.size();
  enum : std::uint8_t { white, grey, black };
  std::vector<std::uint8_t> colour(n, white);
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
      const TaskId v = deps[next++];
      if (colour[v] == white) {
        colour[v] = grey;
        stack.push_back({v, 0});
        continue;
      }
      if (colour[v] != grey) continue;
      auto from =
          std::find_if(stack.begin(), stack.end(), [&](const auto& f) { return f.first == v; });
      std::vector<TaskId> cycle;
      for (auto it = from; it != stack.end(); ++it) cycle.push_back(it->first);
      std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
      return cycle;
    }
  }
  return {};
}

std::string describe_cycle(const WorkflowGraph& graph, const std::vector<TaskId>& cycle) {
  std::string text;
  for (TaskId id : cycle) text += graph.tasks[id].name + " -> ";
  if (!cycle.empty()) text += graph.tasks[cycle.front()].name;
  return text;
}

}  // namespace chorus
