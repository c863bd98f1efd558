// chorus status [RUN]: a run's state from the journal (default: the latest run).
// --nodes: the run's nodes, their capacities, what runs on each and what ran there.
#include <array>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/journal_access.hpp"
#include "cli/json_text.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

// What the journal says about one node of a run.
struct NodeUse {
  NodeInfo info;
  std::vector<std::string> running;  // tasks whose current attempt runs there
  int busy_cores = 0;
  int attempts = 0;  // attempts started there
  int failed = 0;    // attempts that failed there (lost with the node included)
};

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

void add_status_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "Show a run's progress from the journal");
  struct Args {
    std::string run = "latest";
    std::string state_dir;
    bool json = false;
    bool all = false;
    bool nodes = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id, a unique prefix, or 'latest'")->default_str("latest");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->add_flag("--tasks", a->all, "List every task with its state");
  cmd->add_flag("--nodes", a->nodes,
                "List the run's nodes: capacity, what runs on each, attempts and failures there");
  cmd->callback([a] {
    auto [store, run_info] = open_run_or_exit(a->state_dir, a->run);
    const RunInfo* run = &run_info;
    auto state = replay_or_exit(*store, run_info);
    std::array<std::int64_t, 7> counts{};
    for (const auto& t : state.tasks) ++counts[static_cast<std::size_t>(t.state)];
    std::int64_t seen = static_cast<std::int64_t>(state.tasks.size());
    std::int64_t not_started = std::max<std::int64_t>(0, run->total_tasks - seen);
    RunStatus status = effective_status(*run);
    double end = status == RunStatus::running ? wall_seconds_now() : run->updated;

    if (a->json) {
      nlohmann::json j{{"run", run->id},
                       {"workflow", run->workflow_name},
                       {"file", run->workflow_path},
                       {"status", to_string(status)},
                       {"created", run->created},
                       {"updated", run->updated},
                       {"total", run->total_tasks},
                       {"not_started", not_started}};
      for (auto s : {TaskState::running, TaskState::succeeded, TaskState::failed,
                     TaskState::cancelled, TaskState::timed_out}) {
        j[to_string(s)] = counts[static_cast<std::size_t>(s)];
      }
      nlohmann::json tasks = nlohmann::json::array();
      for (const auto& t : state.tasks) {
        if (!a->all && t.state != TaskState::failed && t.state != TaskState::timed_out) continue;
        tasks.push_back({{"task", t.name},
                         {"state", to_string(t.state)},
                         {"attempt", t.attempt},
                         {"exit_code", t.exit_code},
                         {"detail", t.detail}});
      }
      j["tasks"] = tasks;
      if (a->nodes) {
        nlohmann::json jn = nlohmann::json::array();
        for (const auto& n : node_use(*store, *run, state)) {
          jn.push_back({{"node", n.info.name},
                        {"cores", n.info.capacity.cores},
                        {"memory_mb", n.info.capacity.memory_mb},
                        {"gpus", n.info.capacity.gpus},
                        {"running", n.running},
                        {"busy_cores", n.busy_cores},
                        {"attempts", n.attempts},
                        {"failed", n.failed}});
        }
        j["nodes"] = jn;
      }
      std::printf("%s\n", json_text(j, 2).c_str());
      return;
    }
    std::printf("run       %s (%s)\n", run->id.c_str(), to_string(status));
    std::printf("workflow  %s%s%s\n", run->workflow_name.c_str(),
                run->workflow_path.empty() ? "" : "  ", run->workflow_path.c_str());
    std::printf("started   %s, %s elapsed\n", format_time(run->created).c_str(),
                format_duration(
                    std::chrono::nanoseconds(static_cast<std::int64_t>((end - run->created) * 1e9)))
                    .c_str());
    std::printf(
        "tasks     %lld total: %lld succeeded, %lld running, %lld failed, %lld timed out, "
        "%lld cancelled, %lld not started\n",
        static_cast<long long>(run->total_tasks),
        static_cast<long long>(counts[static_cast<std::size_t>(TaskState::succeeded)]),
        static_cast<long long>(counts[static_cast<std::size_t>(TaskState::running)]),
        static_cast<long long>(counts[static_cast<std::size_t>(TaskState::failed)]),
        static_cast<long long>(counts[static_cast<std::size_t>(TaskState::timed_out)]),
        static_cast<long long>(counts[static_cast<std::size_t>(TaskState::cancelled)]),
        static_cast<long long>(not_started));
    for (const auto& t : state.tasks) {
      bool bad = t.state == TaskState::failed || t.state == TaskState::timed_out;
      if (!a->all && !bad) continue;
      const std::string attempt =
          t.attempt == 0 ? "not started" : "attempt " + std::to_string(t.attempt);
      std::printf("  %-10s %s (%s)%s%s\n", to_string(t.state), t.name.c_str(), attempt.c_str(),
                  t.detail.empty() ? "" : ": ", t.detail.c_str());
    }
    if (a->nodes) {
      auto nodes = node_use(*store, *run, state);
      std::printf("nodes     %zu\n", nodes.size());
      for (const auto& n : nodes) {
        std::string running;
        for (std::size_t i = 0; i < n.running.size() && i < 8; ++i) {
          running += (i == 0 ? ": " : ", ") + n.running[i];
        }
        if (n.running.size() > 8) running += ", ...";
        std::printf("  %-12s %-24s %d/%d cores busy, %zu running%s; %d attempts, %d failed\n",
                    n.info.name.c_str(), to_string(n.info.capacity).c_str(), n.busy_cores,
                    n.info.capacity.cores, n.running.size(), running.c_str(), n.attempts, n.failed);
      }
    }
    if (status == RunStatus::interrupted || status == RunStatus::failed ||
        status == RunStatus::cancelled) {
      std::printf("resume with: chorus run --resume %s\n", run->id.c_str());
    }
  });
}

const CommandRegistrar registrar{"status", add_status_command};

}  // namespace
}  // namespace chorus::cli
