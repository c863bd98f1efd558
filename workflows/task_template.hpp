// TaskTemplate: one entry of `tasks:` as written, before its sweep is expanded and its `after`
// names are resolved. Keeps positions so later phases can point at the offending scalar.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/resources.hpp"
#include "core/task_spec.hpp"
#include "core/units.hpp"
#include "core/workflow_graph.hpp"
#include "workflows/data_reader.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/sweep.hpp"

namespace chorus {

using EnvEntries = std::vector<std::pair<std::string, LocatedText>>;

// Values a task inherits: from `defaults:` and the top-level `env:`/`workdir:`.
struct TaskDefaults {
  Resources per_rank{1, 0, 0};
  Position cores_pos, memory_pos, gpus_pos;  // where each was set (unknown = built-in default)
  int retries = 0;
  Duration timeout{0};
  bool shell = false;
  EnvEntries env;  // top-level env, then defaults env (later entries override earlier ones)
  std::optional<LocatedText> workdir;
  std::string user;                  // the top-level `user:`
  std::vector<LocatedText> uses;     // `uses:` in defaults; a task's own `uses:` replaces it
  std::optional<DataTemplate> data;  // `data:` in defaults; a task's own keys override its keys
  // `image:` / `image_pull_policy:` in defaults; a task's or service's own value replaces it.
  std::optional<LocatedText> image;
  std::optional<LocatedText> image_pull_policy;
  // The top-level `sources:` that `data:` names (read before defaults and tasks); never null
  // once the loader set it (nullptr = none declared).
  const std::vector<DataSource>* sources = nullptr;
};

// No repeat group: the template is a task at the top level of `tasks:`.
inline constexpr int kNoGroup = -1;

// `quorum:` on a task as written (workflows/quorum_reader.hpp); checked against the task's group
// and sweep once the whole file is read (check_quorums).
struct QuorumTemplate {
  Position pos;         // the `quorum` key
  QuorumChoice choice;  // policy "static" when not written; n 0 when not written
  Position n_pos, policy_pos;
};

struct TaskTemplate {
  std::string name;
  Position pos;                      // the name's value; the task's map when it has no usable name
  std::vector<SweepVariable> sweep;  // empty for a plain task
  Position sweep_pos;
  bool shell = false;
  std::vector<LocatedText> argv;  // when !shell
  LocatedText shell_command;      // when shell
  std::vector<LocatedText> after;
  EnvEntries env;  // inherited entries first, overridden in place by the task's own
  std::optional<LocatedText> workdir;
  TaskKind kind = TaskKind::executable;
  Position kind_pos;
  std::string user;
  std::string job;  // `job:`; a partitioned task's pieces default to one job named like the task
  double job_weight = 0;  // `job: {name: ..., weight: w}`; 0 = not given (the job weighs 1)
  Position job_weight_pos;
  int ranks = 1;  // MPI processes (kind: mpi); per_rank holds each one's resources
  Position ranks_pos;
  int nodes = 0;  // kind mpi: spread over exactly this many nodes (0: placement decides)
  Position nodes_pos;
  Resources per_rank{1, 0, 0};
  Position cores_pos, memory_pos, gpus_pos;
  int retries = 0;
  Duration timeout{0};
  Duration estimate{0};
  std::vector<LocatedText> outputs;
  std::vector<LocatedText> inputs;
  std::vector<LocatedText> uses;  // service names, never placeholders
  DataMovement data;              // `data:`, from/to resolved to the graph's sources
  // Index of the repeat group (in the order of `tasks:`) this task belongs to, or kNoGroup. A
  // group's tasks carry the variable `round` first in `sweep` (round 1 while loading).
  int group = kNoGroup;
  bool gate = false;  // the held no-op task named like group `group` (no command)
  std::optional<QuorumTemplate> quorum;  // `quorum:`, a sweep inside a repeat group closing early
  // The container image (may hold placeholders, checked as a reference once substituted) and
  // its pull policy (Always, IfNotPresent or Never, checked when read); unset = none.
  std::optional<LocatedText> image;
  std::optional<LocatedText> image_pull_policy;
};

// Sets or overrides `key` in `env`, keeping the first position of the key in the order.
void set_env(EnvEntries& env, const std::string& key, LocatedText value);

}  // namespace chorus
