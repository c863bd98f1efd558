// StateStore: the run journal. Every task transition is appended here before it is acted on, so a
// coordinator killed at any instant can be resumed without losing or repeating finished work.
//
// Threading: one StateStore object per thread. Several processes may open the same store (a
// running `chorus run` writes while `chorus status` reads); writers are serialised by the
// database, readers never block the writer.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/status.hpp"
#include "core/task_spec.hpp"
#include "core/task_state.hpp"
#include "runtime/store/node_field.hpp"  // the node field's format

namespace chorus {

enum class RunStatus : std::uint8_t { running, succeeded, failed, cancelled, interrupted };
const char* to_string(RunStatus s);
std::optional<RunStatus> parse_run_status(std::string_view text);

struct RunInfo {
  std::string id;  // "<workflow name>-<n>", unique in the store
  std::string workflow_name;
  std::string workflow_path;  // absolute path of the file, empty for embedded runs
  std::string workdir;        // absolute
  RunStatus status = RunStatus::running;
  double created = 0;  // wall seconds
  double updated = 0;
  std::int64_t total_tasks = 0;
  std::int64_t coordinator_pid = 0;  // of the process driving it now (0 when none)
  // What makes coordinator_pid name one process, not whoever has the pid now: its start time
  // (clock ticks since boot, /proc/<pid>/stat field 22) and the boot id of `host`. 0 and empty
  // for runs journaled before schema version 3.
  std::uint64_t coordinator_start = 0;
  std::string boot_id;
  std::string host;
  // Random, host-unique (128 bits in hex), fixed for the run's life; its tasks carry it as
  // CHORUS_RUN_TOKEN, which is how a resume recognises them (ids repeat across state folders).
  // create_run draws it when empty. Empty for runs journaled before schema version 3.
  std::string token;
  // The nodes the run may place work on, with their capacities (what a report's lanes and
  // utilization are measured against). Empty for runs journaled before schema version 2.
  std::vector<NodeInfo> nodes;
};

// One journaled transition. `name` and `node` must stay valid for the duration of append().
// `kind`, `cores` and `node` describe the attempt where it is placed: the coordinator sets them on
// `running` events; other events may leave them at their defaults.
struct TaskEvent {
  TaskId task = kNoTask;
  std::string_view name;
  std::uint32_t attempt = 0;
  TaskState state = TaskState::pending;
  double time = 0;  // wall seconds
  int exit_code = 0;
  std::uint64_t fingerprint = 0;
  std::string detail;  // failure message, ...; usually empty
  TaskKind kind = TaskKind::executable;
  int cores = 0;  // the attempt's total cores (ranks x cores per rank); 0 = none
  // Name of the node it runs on; empty when not placed. An MPI task spread over several nodes:
  // "n1:8,n2:4", each node with the cores held there (store/node_field.hpp writes and reads it).
  std::string_view node;
};

// A task attempt's process group on the run's host (from Launcher::process_group), journaled so
// a resume can kill what a killed coordinator left running, even a task that emptied its
// environment. Only the groups of the coordinator session on `RunInfo::boot_id` are kept.
struct TaskGroup {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
  std::int64_t pgid = 0;
  std::uint64_t start_ticks = 0;  // the leader's
};

// Why a task attempt went where it did, from a placement policy that explains its decisions
// (schedulers/placement_explanation.hpp): journaled with the attempt's `running` event, in the
// same transaction. `chorus why` prints it; `chorus model train` takes the chosen candidate's
// features with the attempt's measured runtime as a training row. The views must stay valid for
// the duration of append().
struct PlacementCandidate {  // one node considered for an attempt
  std::string_view node;
  double predicted_s = std::numeric_limits<double>::quiet_NaN();  // the policy's estimate there
  std::span<const float>
      features;  // kFeatureCount values (schedulers/netaware/features.hpp), or empty
};
struct PlacementRecord {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
  std::string_view policy;  // "network-aware"
  std::string_view
      basis;  // "model <file>", "analytic (no model)", "analytic (telemetry 40 s old)", ...
  std::span<const PlacementCandidate> candidates;  // [0] = the chosen node; the next best after it
};
// A placement record as read back. `name` is the task's (from the attempt's events).
struct PlacementRow {
  TaskId task = kNoTask;
  std::string name;
  std::uint32_t attempt = 0;
  std::string policy, basis;
  struct Candidate {
    std::string node;
    double predicted_s = std::numeric_limits<double>::quiet_NaN();
    std::vector<float> features;
  };
  std::vector<Candidate> candidates;
};

// A journaled event as read back.
struct EventRecord {
  std::int64_t seq = 0;
  TaskId task = kNoTask;
  std::string name;
  std::uint32_t attempt = 0;
  TaskState state = TaskState::pending;
  double time = 0;
  int exit_code = 0;
  std::uint64_t fingerprint = 0;
  std::string detail;
  // As in TaskEvent. Events journaled before schema version 2 read back as executable, 1 core, no
  // node (what that version's coordinator gave a task unless it asked for more cores).
  TaskKind kind = TaskKind::executable;
  int cores = 0;
  std::string node;
};

// The last known state of one task, folded from its events.
struct TaskRecord {
  TaskId task = kNoTask;
  std::string name;
  TaskState state = TaskState::pending;
  std::uint32_t attempt = 0;
  int exit_code = 0;
  std::uint64_t fingerprint = 0;
  double first_start = 0;  // first 'running' event, 0 if never started
  double last_start = 0;
  double end = 0;  // last terminal event, 0 if none
  std::string detail;
  std::string node;  // the last 'running' event's node field ("" if none)
};

struct RunState {
  RunInfo info;
  std::vector<TaskRecord> tasks;  // in task-id order; only tasks that have events
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // Whether the journal file is sound (SQLite's quick_check). Errors: io_error naming the file
  // and what to do when it is damaged or cannot be read.
  virtual Status check_integrity() = 0;
  // Folds what only the write-ahead log holds into the journal file itself, so the file alone
  // holds every committed run (called when a run ends). Best effort: an error says why it could
  // not, and the data stays durable in the log.
  virtual Status checkpoint() = 0;

  // Registers a new run; fills in info.id ("<workflow_name>-<n>") and returns it.
  virtual Result<RunInfo> create_run(RunInfo info) = 0;
  virtual Status update_run(const RunInfo& info) = 0;
  // Exact id, or a unique prefix of one, or "latest".
  virtual Result<RunInfo> find_run(std::string_view id) = 0;
  // The newest run of the given workflow file (absolute path), if any.
  virtual Result<RunInfo> latest_run_of(std::string_view workflow_path) = 0;
  virtual Result<std::vector<RunInfo>> list_runs() = 0;

  // Appends the events and records the task groups and placement records in one transaction:
  // all are durable (to the OS) when it returns, or none. A group or a placement recorded again
  // for the same (task, attempt) replaces it.
  virtual Status append(std::string_view run_id, std::span<const TaskEvent> events,
                        std::span<const TaskGroup> groups,
                        std::span<const PlacementRecord> placements) = 0;
  Status append(std::string_view run_id, std::span<const TaskEvent> events,
                std::span<const TaskGroup> groups) {
    return append(run_id, events, groups, {});
  }
  Status append(std::string_view run_id, std::span<const TaskEvent> events) {
    return append(run_id, events, {}, {});
  }
  // The run's placement records in (task, attempt) order; empty for runs journaled before schema
  // version 4 or placed by a policy that does not explain.
  virtual Result<std::vector<PlacementRow>> placements(std::string_view run_id) = 0;
  // The groups recorded for the run (in no particular order), and forgetting them (when they are
  // known to be gone: killed by a resume, or the run ended).
  virtual Result<std::vector<TaskGroup>> task_groups(std::string_view run_id) = 0;
  virtual Status forget_task_groups(std::string_view run_id) = 0;
  virtual Result<RunState> replay(std::string_view run_id) = 0;
  virtual Result<std::vector<EventRecord>> events(std::string_view run_id) = 0;
};

// A fresh RunInfo::token: 128 random bits (getrandom) in 32 hex digits.
std::string new_run_token();

// Opens (creating if needed) the SQLite journal at `path` in WAL mode.
// Errors: io_error with SQLite's message and the path.
Result<std::unique_ptr<StateStore>> open_sqlite_store(const std::string& path);

}  // namespace chorus
