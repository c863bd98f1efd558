#include "schedulers/sim/simulator.hpp"

#include "schedulers/netaware/features.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/placement/placement_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>

namespace chorus::sim {
namespace {

using Nanos = std::int64_t;

Nanos to_nanos(double s) {
  return static_cast<Nanos>(std::llround(s * 1e9));
}
double to_seconds(Nanos ns) {
  return static_cast<double>(ns) * 1e-9;
}
TimePoint to_time(Nanos ns) {
  return TimePoint{} + Duration(ns);
}
// The clock's end: INT64_MAX is the loop's "no event" sentinel. Every runtime and arrival is at
// most kMaxSimSeconds (validate_workload), so each step fits; only their sum can pass the end.
constexpr Nanos kLastNanos = INT64_MAX - 1;

// The spec the policies see for task `k` of `job` (global id `id`): a function task of its cores,
// or an MPI task of its ranks.
void fill_spec(TaskSpec& s, const SimJob& job, std::size_t k, TaskId id) {
  const SimTask& t = job.tasks[k];
  s.id = id;
  s.name = job.id + "/" + std::to_string(k);
  s.user = job.user;
  s.job = job.id;
  s.kind = t.ranks > 0 ? TaskKind::mpi : TaskKind::function;
  s.per_rank = Resources{t.cores, 0, 0};
  s.ranks = t.ranks > 0 ? t.ranks : 1;
  s.nodes = t.nodes;
  s.estimate = Duration(to_nanos(t.runtime_s));
  s.data = t.data;
}

struct JobState {
  std::unique_ptr<TaskSpec[]> specs;  // alive from arrival to finish
  std::size_t unfinished = 0;
};

struct UserState {
  double weight = 1;
  long demand = 0;   // cores of ready + running tasks
  long running = 0;  // cores of running tasks
  bool backlogged = false;
  UserShare share;
};

// Integrates received service and max-min fair entitlement over [from, to).
class ShareMeter {
 public:
  ShareMeter(std::vector<UserState>& users, double capacity) : users_(users), capacity_(capacity) {}

  void add_demand(std::uint32_t u, long cores) {
    UserState& s = users_[u];
    s.demand += cores;
    if (s.demand > 0 && !s.backlogged) {
      s.backlogged = true;
      backlogged_.push_back(u);
    }
  }

  void integrate(double dt) {
    if (dt <= 0 || backlogged_.empty()) return;
    // Drop users whose demand fell to 0 since the last interval.
    std::erase_if(backlogged_, [&](std::uint32_t u) {
      if (users_[u].demand > 0) return false;
      users_[u].backlogged = false;
      return true;
    });
    order_ = backlogged_;
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return users_[a].demand / users_[a].weight < users_[b].demand / users_[b].weight;
    });
    double cap = capacity_, weight = 0;
    for (auto u : order_) weight += users_[u].weight;
    for (auto u : order_) {
      UserState& s = users_[u];
      double fair = weight > 0 ? cap * s.weight / weight : 0;
      double alloc = std::min(static_cast<double>(s.demand), fair);
      s.share.entitled += alloc * dt;
      s.share.received += static_cast<double>(s.running) * dt;
      cap -= alloc;
      weight -= s.weight;
    }
  }

 private:
  std::vector<UserState>& users_;
  double capacity_;
  std::vector<std::uint32_t> backlogged_;
  std::vector<std::uint32_t> order_;
};

// A network for this workload and cluster: one model node per cluster node, a source for every
// task's from/to.
Status check_network(const NetworkModel& network, const Workload& workload,
                     const SimCluster& cluster) {
  if (network.nodes.size() != cluster.nodes.size()) {
    return invalid_argument("the network model describes " + std::to_string(network.nodes.size()) +
                            " nodes, the cluster has " + std::to_string(cluster.nodes.size()));
  }
  for (const SimJob& job : workload.jobs) {
    for (std::size_t k = 0; k < job.tasks.size(); ++k) {
      const DataMovement& d = job.tasks[k].data;
      for (SourceId s : {d.from, d.to}) {
        if (s != kNoSource && s >= network.sources.size()) {
          return invalid_argument("job '" + job.id + "' task " + std::to_string(k) +
                                  " moves data from/to source " + std::to_string(s) +
                                  "; the network model has " +
                                  std::to_string(network.sources.size()) + " sources");
        }
      }
    }
  }
  return {};
}

// What the nodes' telemetry says now (network_model.hpp), written between decisions.
void write_network_facts(const NetworkModel& network, const SimCluster& cluster,
                         ClusterState& state, double now_s, const std::vector<int>& transfers) {
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    const NodeView& v = state.view(static_cast<int>(i));
    const int cores = v.info->capacity.cores;
    network.write_facts(state.facts(static_cast<int>(i)), i, now_s, cores, cores - v.free.cores,
                        transfers[i]);
  }
}

}  // namespace

Result<SimResult> simulate(const Workload& workload, const SimCluster& cluster, QueuePolicy& queue,
                           PlacementPolicy& placement, const SimOptions& options) {
  if (Status s = validate_workload(workload); !s.ok()) return s;
  if (cluster.nodes.empty()) return invalid_argument("the simulated cluster has no nodes");
  const NetworkModel* network = options.network;
  if (network != nullptr) {
    if (Status s = check_network(*network, workload, cluster); !s.ok()) return s;
  }
  const int largest = cluster.largest_node_cores();
  const std::size_t n_jobs = workload.jobs.size();
  ClusterState state(cluster.nodes);
  PlacementStep step(placement);

  // Dense task ids: job j owns [first[j], first[j + 1]).
  std::vector<TaskId> first(n_jobs + 1, 0);
  for (std::size_t j = 0; j < n_jobs; ++j) {
    const SimJob& job = workload.jobs[j];
    for (std::size_t k = 0; k < job.tasks.size(); ++k) {
      if (job.tasks[k].ranks > 0) {
        // An MPI task: whether its ranks fit the empty cluster, counted as a live run would.
        const FirstFit by_resources;
        PlacementStep empty(by_resources);
        TaskSpec probe;
        fill_spec(probe, job, k, 0);
        if (Placement p = empty.place(probe, state); p.fit == Fit::never) {
          return Status(ErrorCode::unsatisfiable,
                        "job '" + job.id + "' task " + std::to_string(k) + " " + p.why);
        }
      } else if (job.tasks[k].cores > largest) {
        return Status(ErrorCode::unsatisfiable, "job '" + job.id + "' task " + std::to_string(k) +
                                                    " needs " + std::to_string(job.tasks[k].cores) +
                                                    " cores; the largest node has " +
                                                    std::to_string(largest));
      }
    }
    if (first[j] + job.tasks.size() >= kNoTask) {
      return invalid_argument("workload has too many tasks for 32-bit task ids");
    }
    first[j + 1] = first[j] + static_cast<TaskId>(job.tasks.size());
  }
  const std::size_t n_tasks = first[n_jobs];
  std::vector<std::uint32_t> job_of(n_tasks);
  for (std::size_t j = 0; j < n_jobs; ++j) {
    for (TaskId t = first[j]; t < first[j + 1]; ++t) job_of[t] = static_cast<std::uint32_t>(j);
  }
  // Dependents, inside each job and across jobs (after_other), as global ids (CSR).
  std::vector<std::uint32_t> waiting(n_tasks, 0), dep_start(n_tasks + 1, 0), deps;
  for (std::size_t j = 0; j < n_jobs; ++j) {
    const auto& tasks = workload.jobs[j].tasks;
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      waiting[first[j] + k] =
          static_cast<std::uint32_t>(tasks[k].after.size() + tasks[k].after_other.size());
      for (auto a : tasks[k].after) ++dep_start[first[j] + a + 1];
      for (const TaskRef& r : tasks[k].after_other) ++dep_start[first[r.job] + r.task + 1];
    }
  }
  for (std::size_t t = 0; t < n_tasks; ++t) dep_start[t + 1] += dep_start[t];
  deps.resize(dep_start[n_tasks]);
  {
    std::vector<std::uint32_t> fill(dep_start.begin(), dep_start.end() - 1);
    for (std::size_t j = 0; j < n_jobs; ++j) {
      const auto& tasks = workload.jobs[j].tasks;
      for (std::size_t k = 0; k < tasks.size(); ++k) {
        for (auto a : tasks[k].after)
          deps[fill[first[j] + a]++] = first[j] + static_cast<TaskId>(k);
        for (const TaskRef& r : tasks[k].after_other)
          deps[fill[first[r.job] + r.task]++] = first[j] + static_cast<TaskId>(k);
      }
    }
  }

  // Users, and the closed-loop successor of each job.
  std::unordered_map<std::string, std::uint32_t> user_index;
  std::vector<std::uint32_t> user_of(n_jobs);
  std::vector<UserState> users;
  std::vector<std::string> user_names;
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::vector<std::uint32_t> successor(n_jobs, kNone), last_of_user;
  for (std::size_t j = 0; j < n_jobs; ++j) {
    const SimJob& job = workload.jobs[j];
    auto [it, added] = user_index.emplace(job.user, static_cast<std::uint32_t>(users.size()));
    if (added) {
      UserState s;
      if (auto w = options.user_weights.find(job.user); w != options.user_weights.end()) {
        s.weight = w->second;
      }
      users.push_back(s);
      user_names.push_back(job.user);
      last_of_user.push_back(kNone);
    }
    user_of[j] = it->second;
    if (job.after_previous && last_of_user[it->second] != kNone) {
      successor[last_of_user[it->second]] = static_cast<std::uint32_t>(j);
    }
    last_of_user[it->second] = static_cast<std::uint32_t>(j);
  }
  ShareMeter meter(users, cluster.total_cores());

  SimResult result;
  result.policy = std::string(queue.name());
  result.jobs.resize(n_jobs);
  using Event = std::pair<Nanos, std::uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> arrivals, completions;
  std::vector<std::uint8_t> is_successor(n_jobs, 0);
  for (auto s : successor) {
    if (s != kNone) is_successor[s] = 1;
  }
  for (std::size_t j = 0; j < n_jobs; ++j) {
    if (!is_successor[j]) {
      arrivals.push({to_nanos(workload.jobs[j].arrival_s), static_cast<std::uint32_t>(j)});
    }
  }

  std::vector<JobState> jobs(n_jobs);
  std::vector<std::int32_t> node_of(n_tasks, -1);
  // MPI tasks running across several nodes (rare: the map stays small).
  std::unordered_map<TaskId, std::vector<RankShare>> spreads;
  std::vector<Nanos> started_at(n_tasks, 0);
  std::vector<std::uint8_t> queued(n_tasks, 0);
  std::size_t running = 0;
  // Data tasks running per node: they share its bandwidth (network model only).
  std::vector<int> transfers(network != nullptr ? cluster.nodes.size() : 0, 0);
  const double total_cores = cluster.total_cores();

  auto spec_of = [&](TaskId t) -> TaskSpec& { return jobs[job_of[t]].specs[t - first[job_of[t]]]; };
  auto make_ready = [&](TaskId t, Nanos now) {
    queued[t] = 1;
    TaskSpec& spec = spec_of(t);
    meter.add_demand(user_of[job_of[t]], spec.total().cores);
    queue.on_ready(spec, to_time(now));
  };

  auto arrive = [&](std::uint32_t j, Nanos now) {
    const SimJob& job = workload.jobs[j];
    JobRecord& rec = result.jobs[j];
    rec.id = job.id;
    rec.user = job.user;
    rec.job_class = job.job_class.empty() ? job.id : job.job_class;
    rec.size = job.size;
    rec.arrival_s = to_seconds(now);
    rec.work = job.work();
    rec.tasks = job.tasks.size();
    // Alone: its critical path, or its work spread over the whole cluster, whichever is longer.
    std::vector<double> path(job.tasks.size(), 0);
    double critical = 0;
    for (std::size_t k = 0; k < job.tasks.size(); ++k) {
      double before = 0;
      for (auto a : job.tasks[k].after) before = std::max(before, path[a]);
      path[k] = before + job.tasks[k].runtime_s;
      critical = std::max(critical, path[k]);
    }
    rec.alone_s = std::max(critical, rec.work / total_cores);
    JobState& st = jobs[j];
    st.specs = std::make_unique<TaskSpec[]>(job.tasks.size());
    st.unfinished = job.tasks.size();
    for (std::size_t k = 0; k < job.tasks.size(); ++k) {
      fill_spec(st.specs[k], job, k, first[j] + static_cast<TaskId>(k));
    }
    for (std::size_t k = 0; k < job.tasks.size(); ++k) {
      // Tasks whose waits (other jobs' tasks included) all ended before the job arrived, too.
      if (waiting[first[j] + k] == 0) make_ready(first[j] + static_cast<TaskId>(k), now);
    }
  };

  Status failure;
  // now + `seconds`, or nullopt with a failure (naming `what()`) when that passes the clock's end
  // (292 years of simulated time).
  auto later = [&](Nanos now, double seconds, auto what) -> std::optional<Nanos> {
    const Nanos step = to_nanos(seconds);
    if (step <= kLastNanos - now) return now + step;
    failure =
        invalid_argument("the simulation passes " + std::to_string(kLastNanos / 1'000'000'000) +
                         " s (292 years) of simulated time at " + what() +
                         ": the workload's runtimes and arrivals add up to more than the "
                         "simulator's clock holds");
    return std::nullopt;
  };

  auto finish_task = [&](TaskId t, Nanos now) {
    std::uint32_t j = job_of[t];
    TaskSpec& spec = spec_of(t);
    Placement where;
    where.fit = Fit::now;
    where.node = node_of[t];
    if (!spreads.empty()) {
      if (auto it = spreads.find(t); it != spreads.end()) {
        where.shares = std::move(it->second);
        spreads.erase(it);
      }
    }
    state.release(spec, where);
    --running;
    if (network != nullptr && !spec.data.empty() && where.node >= 0 && where.shares.empty()) {
      --transfers[static_cast<std::size_t>(where.node)];
    }
    UserState& u = users[user_of[j]];
    u.running -= spec.total().cores;
    u.demand -= spec.total().cores;
    queue.on_finish(spec, TaskState::succeeded, Duration(now - started_at[t]), to_time(now));
    for (auto d = dep_start[t]; d < dep_start[t + 1]; ++d) {
      // A dependent in a job that has not arrived yet becomes ready when its job arrives.
      if (--waiting[deps[d]] == 0 && jobs[job_of[deps[d]]].specs) make_ready(deps[d], now);
    }
    if (--jobs[j].unfinished == 0) {
      result.jobs[j].finish_s = to_seconds(now);
      jobs[j].specs.reset();
      if (successor[j] != kNone) {
        const SimJob& next = workload.jobs[successor[j]];
        if (auto at = later(now, next.arrival_s,
                            [&] { return "the arrival of job '" + next.id + "'"; })) {
          arrivals.push({*at, successor[j]});
        }
      }
    }
  };

  auto dispatch = [&](Nanos now) {
    if (network != nullptr)
      write_network_facts(*network, cluster, state, to_seconds(now), transfers);
    ClusterView view{state.views(), to_time(now)};
    queue.begin_pass();
    while (queue.size() > 0) {
      auto next = queue.next(view);
      if (!next) return;
      if (*next >= n_tasks || !queued[*next]) {
        failure = internal_error("queue policy '" + std::string(queue.name()) + "' named task " +
                                 std::to_string(*next) + ", which is not queued");
        return;
      }
      TaskSpec& spec = spec_of(*next);
      Placement where = step.place(spec, state, to_time(now));
      if (where.fit != Fit::now) {
        // Not now (never was ruled out up front); a task waiting for a busy node by the
        // placement policy's choice is passed over when the queue policy allows it.
        if (where.waiting_for_better && queue.pass_over(*next)) continue;
        return;
      }
      queue.on_start(spec, to_time(now));
      // A data task on one node with a modelled network: its features as the policy saw them.
      const bool modelled = network != nullptr && !spec.data.empty() && where.shares.empty();
      FeatureVector features{};
      if (modelled && options.rows != nullptr) {
        fill_features(spec, state.view(where.node), to_time(now), features);
      }
      queued[*next] = 0;
      node_of[*next] = where.node;
      started_at[*next] = now;
      state.reserve(spec, where);
      if (!where.shares.empty()) spreads.emplace(*next, std::move(where.shares));
      ++running;
      users[user_of[job_of[*next]]].running += spec.total().cores;
      ++result.decisions;
      JobRecord& rec = result.jobs[job_of[*next]];
      if (rec.start_s < 0) rec.start_s = to_seconds(now);
      const SimJob& job = workload.jobs[job_of[*next]];
      const std::size_t k = *next - first[job_of[*next]];
      double runtime_s = job.tasks[k].runtime_s;
      if (modelled) {
        const auto n = static_cast<std::size_t>(where.node);
        const NodeView& v = state.view(where.node);
        runtime_s =
            network->runtime_s(spec.data, runtime_s, n, to_seconds(now), v.info->capacity.cores,
                               v.info->capacity.cores - v.free.cores, ++transfers[n]);
        if (options.rows != nullptr) options.rows->push_back({features, runtime_s, {}});
      }
      auto end = later(now, runtime_s,
                       [&] { return "the end of job '" + job.id + "' task " + std::to_string(k); });
      if (!end) return;
      completions.push({*end, *next});
    }
  };

  for (auto& rec : result.jobs) rec.start_s = -1;
  Nanos last = 0;
  while (!arrivals.empty() || !completions.empty()) {
    Nanos now = std::min(arrivals.empty() ? INT64_MAX : arrivals.top().first,
                         completions.empty() ? INT64_MAX : completions.top().first);
    meter.integrate(to_seconds(now - last));
    last = now;
    while (!completions.empty() && completions.top().first == now) {
      TaskId t = completions.top().second;
      completions.pop();
      finish_task(t, now);
    }
    if (!failure.ok()) return failure;
    while (!arrivals.empty() && arrivals.top().first == now) {
      std::uint32_t j = arrivals.top().second;
      arrivals.pop();
      arrive(j, now);
    }
    dispatch(now);
    if (!failure.ok()) return failure;
    if (running == 0 && completions.empty() && arrivals.empty() && queue.size() > 0) {
      return internal_error("queue policy '" + std::string(queue.name()) + "' left " +
                            std::to_string(queue.size()) + " tasks queued on an idle cluster");
    }
  }
  result.makespan_s = to_seconds(last);
  for (std::size_t u = 0; u < users.size(); ++u) result.users[user_names[u]] = users[u].share;
  return result;
}

}  // namespace chorus::sim
