#include "cli/status_report.hpp"

#include <algorithm>
#include <map>

#include "cli/journal_access.hpp"
#include "runtime/store/node_field.hpp"

namespace chorus::cli {
namespace {

std::vector<NodeUse> node_use(StateStore& store, const RunInfo& run, const RunState& state) {
  std::vector<NodeUse> nodes;
  std::map<std::string, std::size_t> index;
  for (const auto& n : run.nodes) {
    index[n.name] = nodes.size();
    nodes.push_back({n, {}, 0, 0, 0});
  }
  auto events = store.events(run.id);
  if (!events.ok()) return nodes;
  // Where each task's latest attempt was placed (several nodes for a spread MPI task), and with
  // how many cores on each.
  std::map<TaskId, std::vector<std::pair<std::size_t, int>>> placed;
  for (const auto& e : *events) {
    if (e.state == TaskState::running && !e.node.empty()) {
      auto& where = placed[e.task];
      where.clear();
      for (auto& part : split_node_field(e.node, e.cores)) {
        auto it = index.find(part.node);
        if (it == index.end()) {
          it = index.emplace(part.node, nodes.size()).first;
          nodes.push_back({NodeInfo{part.node, {}}, {}, 0, 0, 0});
        }
        nodes[it->second].attempts += 1;
        where.emplace_back(it->second, part.cores);
      }
    } else if ((e.state == TaskState::failed || e.state == TaskState::timed_out) &&
               placed.count(e.task) != 0) {
      for (const auto& [node, cores] : placed[e.task]) nodes[node].failed += 1;
    }
  }
  for (const auto& t : state.tasks) {
    auto it = placed.find(t.task);
    if (t.state != TaskState::running || it == placed.end()) continue;
    for (const auto& [node, cores] : it->second) {
      nodes[node].running.push_back(t.name);
      nodes[node].busy_cores += cores;
    }
  }
  return nodes;
}

}  // namespace

RunStatusReport make_status_report(StateStore& store, const RunInfo& run, const RunState& state,
                                   bool all_tasks, bool nodes) {
  RunStatusReport report{run, effective_status(run), 0, {}, 0, state.tasks, all_tasks, {}};
  for (const auto& t : state.tasks) ++report.counts[static_cast<std::size_t>(t.state)];
  std::int64_t seen = static_cast<std::int64_t>(state.tasks.size());
  report.not_started = std::max<std::int64_t>(0, run.total_tasks - seen);
  double end = report.status == RunStatus::running ? wall_seconds_now() : run.updated;
  report.elapsed_s = end - run.created;
  if (nodes) report.nodes = node_use(store, run, state);
  return report;
}

}  // namespace chorus::cli
