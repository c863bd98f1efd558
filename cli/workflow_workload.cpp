#include "cli/workflow_workload.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>
#include <vector>

#include "api/run_workflow.hpp"
#include "cli/journal_access.hpp"
#include "cli/task_locations.hpp"
#include "cli/workflow_input.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/queue/work_estimator.hpp"

namespace chorus::cli {
namespace {

// What the journal's earlier runs of the workflow say each job class takes, as uwfq learns it
// live; empty when there is no journal (a workflow never run here).
HistoryWork learned_runtimes(const std::string& state_dir, const WorkflowGraph& graph) {
  HistoryWork history;
  auto store = open_journal(state_dir);
  if (!store.ok()) return history;
  for (const auto& [job_class, seconds] : past_runtimes(**store, graph)) {
    history.add_sample(job_class, seconds);
  }
  return history;
}

// Task ids in a topological order (the graph's dependencies point at earlier positions).
std::vector<std::size_t> topological_order(const WorkflowGraph& graph) {
  const auto& tasks = graph.tasks;
  std::vector<std::size_t> pending(tasks.size()), order;
  auto dependents = dependents_of(graph);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    pending[i] = tasks[i].after.size();
    if (pending[i] == 0) order.push_back(i);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (auto d : dependents[order[k]]) {
      if (--pending[d] == 0) order.push_back(d);
    }
  }
  return order;
}

}  // namespace

Result<WorkflowWorkload> workflow_workload(const std::string& path, const std::string& state_dir) {
  auto graph = load_workflow_for_cli(path, /*oversubscribe=*/true);
  if (!graph.ok()) return graph.status();
  const auto& tasks = graph->tasks;

  // Runtimes: declared, else learned from the journal, else a located error.
  const HistoryWork learned = learned_runtimes(state_dir, *graph);
  std::vector<double> runtime(tasks.size(), 0);
  auto is_service = [](const TaskSpec& t) { return t.kind == TaskKind::service; };
  for (const auto& t : tasks) {
    if (is_service(t)) continue;
    if (t.estimate > Duration::zero()) {
      runtime[t.id] = std::chrono::duration<double>(t.estimate).count();
    } else if (auto mean = learned.mean_seconds(job_class_of(t)); mean && *mean > 0) {
      runtime[t.id] = *mean;
    }
  }
  if (Status s = locate_missing_estimates(
          *graph, display_path(path),
          [&](const TaskSpec& t) { return !is_service(t) && runtime[t.id] <= 0; },
          "chorus simulate needs a runtime for every task",
          "add 'estimate: 30s' (its expected runtime), or run the workflow once so the journal "
          "has its runtimes");
      !s.ok()) {
    return s;
  }

  // The simulator's clock ends after 2^63 ns (292 years): a chain of tasks longer than that can
  // never be simulated, whatever the cluster, so it is refused here, at the task that passes it.
  {
    constexpr double kClockSeconds = 9.2e9;
    std::vector<double> finish(tasks.size(), 0);
    for (auto i : topological_order(*graph)) {
      const TaskSpec& t = tasks[i];
      if (is_service(t)) continue;
      double start = 0;
      for (auto a : t.after) start = std::max(start, finish[a]);
      finish[i] = start + runtime[i];
      if (finish[i] <= kClockSeconds) continue;
      const std::string at =
          display_path(path) + (t.pos.line == 0 ? std::string(": ")
                                                : ":" + std::to_string(t.pos.line) + ":" +
                                                      std::to_string(t.pos.column) + ": ");
      return invalid_argument(
          at + "chorus simulate cannot replay this workflow: its tasks up to '" + t.name +
          "' run one after another for " + std::to_string(static_cast<long long>(finish[i])) +
          " s, more than the simulator's clock holds (9.2e9 s, 292 years)");
    }
  }

  // Jobs by (user, job), in the order they first appear in a topological order of the tasks, so
  // each job's own tasks come after the ones they wait for.
  WorkflowWorkload out;
  out.policy_options = graph->scheduler.options;
  if (const OptionEntry* e = out.policy_options.find("weights")) {
    out.user_weights = user_weights_of(e->value).value_or(std::map<std::string, double>{});
  }
  for (const auto& s : graph->services) out.services.push_back(s.name);
  sim::Workload& w = out.workload;
  w.name = graph->name;
  auto user_of = [](const TaskSpec& t) { return t.user.empty() ? "default" : t.user; };
  std::map<std::string, std::set<std::string>> users_of_job;  // a job name may have several
  for (const auto& t : tasks) {
    if (!is_service(t)) users_of_job[t.job].insert(user_of(t));
  }
  std::map<std::pair<std::string, std::string>, std::uint32_t> job_index;
  std::vector<sim::TaskRef> where(tasks.size());
  for (auto i : topological_order(*graph)) {
    const TaskSpec& t = tasks[i];
    if (is_service(t)) continue;
    const std::string user = user_of(t);
    auto [it, added] =
        job_index.emplace(std::pair{user, t.job}, static_cast<std::uint32_t>(w.jobs.size()));
    if (added) {
      sim::SimJob job;
      job.id = users_of_job[t.job].size() > 1 ? t.job + "@" + user : t.job;
      job.user = user;
      job.job_class = t.job;
      if (auto jw = graph->scheduler.job_weights.find(t.job);
          jw != graph->scheduler.job_weights.end()) {
        job.weight = jw->second;
      }
      w.jobs.push_back(std::move(job));
    }
    sim::SimJob& job = w.jobs[it->second];
    sim::SimTask st;
    st.runtime_s = runtime[i];
    if (t.kind == TaskKind::mpi) {
      // Its shape, so the simulator spreads its ranks over nodes as a live run does.
      st.cores = std::max(1, t.per_rank.cores);
      st.ranks = t.ranks;
      st.nodes = t.nodes;
    } else {
      st.cores = std::max(1, t.total().cores);
    }
    for (auto a : t.after) {
      if (is_service(tasks[a])) continue;
      if (where[a].job == it->second) {
        st.after.push_back(where[a].task);
      } else {
        st.after_other.push_back(where[a]);
      }
    }
    where[i] = sim::TaskRef{it->second, static_cast<std::uint32_t>(job.tasks.size())};
    job.tasks.push_back(std::move(st));
  }
  return out;
}

}  // namespace chorus::cli
