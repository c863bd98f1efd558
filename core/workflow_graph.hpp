// WorkflowGraph: the DAG of TaskSpecs the coordinator runs. Built by workflows/ (from YAML or
// WfFormat) or by the embed API; consumed by runtime/ and the graph planners.
//
// Invariants (established by the builders, checked by validate_graph()): tasks[i].id == i, names
// are unique, every `after` id is < tasks.size(), and the graph has no cycle.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/data_movement.hpp"
#include "core/policy_options.hpp"
#include "core/service_spec.hpp"
#include "core/task_spec.hpp"

namespace chorus {

// The `scheduler:` section of a workflow file: policies by name and their options, checked
// against the policy registry by whoever runs the graph (each policy validates its own options,
// schedulers/policy_registry.hpp). Origins point at each name in the file (line 0 = not from a
// file), so a bad name gets a located error.
struct SchedulerChoice {
  std::string queue;      // empty = the runner's default
  std::string placement;  // empty = the runner's default
  OptionOrigin queue_at, placement_at;
  // Every other key but a planner's: the policies' options (`weights: {alice: 2}`, `grace: 1s`).
  PolicyOptions options;
  // job (TaskSpec::job) -> its weight w_j, from `job: {name: ..., weight: w}` on tasks: a fact
  // about the work, offered to every queue policy (uwfq splits a user's share among its jobs by
  // it, cfq weighs its flows by it; others ignore it). Missing = 1.
  std::map<std::string, double> job_weights;
  // `planner: heft|spwd`: plan the whole graph before it runs and release and place tasks by the
  // plan (the runner then picks the queue order and placement itself). Empty = no planner.
  std::string planner;
  int planner_line = 0, planner_column = 0;
  // SPWD's largest subworkflow: a vertex count, or a percentage of the task count (then
  // planner_mss_percent); 0 = the planner's default.
  double planner_mss = 0;
  bool planner_mss_percent = false;
  Duration planner_deadline{0};  // 0 = the planner's default (critical path at the mean speed)
};

// The keys of a `scheduler:` section that are not policy options.
inline const std::vector<std::string>& scheduler_section_keys() {
  static const std::vector<std::string> keys{"queue", "placement", "planner", "mss", "deadline"};
  return keys;
}

// The tasks of one round of a repeat group, built when the round before it succeeded.
struct RoundPlan {
  std::vector<TaskSpec> tasks;  // `after` holds ids of tasks outside the group (in the graph)
  // Per task: indices into `tasks` that it waits for (dependencies inside the round).
  std::vector<std::vector<std::uint32_t>> local_after;
};

// `quorum: {policy: static, n: 6, k: 4}` on a sweep inside a repeat group: each round of the
// group closes that sweep when the quorum policy (schedulers/quorum/quorum_policy.hpp) says so;
// the members still running then are dropped (cancelled as "dropped by quorum", which their
// dependents count as done). The policy is built by whoever runs the graph (api/run_policies.cpp),
// from the registry, by name with these options.
struct QuorumChoice {
  std::string policy;  // a registry name ("static", "wait-all", "dbw", ...)
  OptionOrigin policy_at;
  PolicyOptions options;  // every key of `quorum:` but `policy` and `n`
  int n = 0;              // the sweep's member count
};

// A group's quorum sweep: which of a round's tasks (indices into RoundPlan::tasks and, for round
// 1, into RepeatGroup::first_round: the same order every round) are its members, in sweep order
// (member i is the policy's worker i).
struct QuorumSweep {
  std::string name;  // the sweep's task name as written
  QuorumChoice choice;
  std::vector<std::uint32_t> members;
  // The JSON file the round driver writes when a round's sweep closes, with {round} in it:
  // absolute (the workflow's workdir/quorum/<group>/round-{round}.json); given to the group's
  // other tasks as CHORUS_QUORUM_FILE. Empty: none is written.
  std::string file;
};

// A `repeat:` block: a group of tasks run in rounds until a condition on what a round wrote holds
// or max_rounds rounds ran. Round 1 is part of the graph; later rounds are submitted while the
// run goes on (runtime/repeat_driver). Tasks after the group depend on its gate.
struct RepeatGroup {
  std::string name;
  TaskId gate = kNoTask;  // a held no-op function task named like the group
  int max_rounds = 1;
  std::vector<TaskId> first_round;  // round 1's tasks
  // Builds round `round` (2..max_rounds). An error fails the group with its message.
  std::function<Result<RoundPlan>(int round)> expand;
  // Whether the group is done after round `round` succeeded. An error fails the group.
  std::function<Result<bool>(int round)> until;
  int line = 0, column = 0;  // where it is declared (0 = built in code)
  // At most one sweep of the group closes on a quorum (empty: every task of a round must
  // succeed).
  std::optional<QuorumSweep> quorum;
};

struct WorkflowGraph {
  std::string name;
  std::string source_path;  // the workflow file, or empty when built in code
  std::string workdir;      // absolute; where tasks run unless they say otherwise
  std::vector<TaskSpec> tasks;
  SchedulerChoice scheduler;
  std::vector<ServiceSpec> services;  // their replicas are tasks of kind service
  std::vector<RepeatGroup> repeats;
  // `sources:`: where tasks' data comes from and goes (TaskSpec::data refers to them by index);
  // agents probe them (runtime/netprobe/).
  std::vector<DataSource> sources;

  // Appends a task, setting its id; returns the id.
  TaskId add(TaskSpec spec) {
    spec.id = static_cast<TaskId>(tasks.size());
    tasks.push_back(std::move(spec));
    return tasks.back().id;
  }
};

// Checks the invariants above; the message names the offending task (and the cycle, a -> b -> a).
Status validate_graph(const WorkflowGraph& graph);

// A dependency cycle in "waits for" order (a waits for b waits for ... waits for a), starting at
// its lowest task id, or empty when the graph has none. Ids in `after` must be < tasks.size().
std::vector<TaskId> find_cycle(const WorkflowGraph& graph);

// "a -> b -> a" for a cycle from find_cycle().
std::string describe_cycle(const WorkflowGraph& graph, const std::vector<TaskId>& cycle);

// For each task, the ids of tasks that list it in `after` (the reverse edges).
std::vector<std::vector<TaskId>> dependents_of(const WorkflowGraph& graph);

}  // namespace chorus
