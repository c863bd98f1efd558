// TaskSpec: everything the runtime needs to know about one unit of work, whatever launches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/data_movement.hpp"
#include "core/resources.hpp"
#include "core/status.hpp"
#include "core/units.hpp"

namespace chorus {

// Dense index of a task inside its WorkflowGraph (tasks[id].id == id).
using TaskId = std::uint32_t;
inline constexpr TaskId kNoTask = ~TaskId{0};

// Index of a service in WorkflowGraph::services (see core/service_spec.hpp).
using ServiceId = std::uint32_t;
inline constexpr ServiceId kNoService = ~ServiceId{0};

enum class TaskKind : std::uint8_t { executable, mpi, function, service };
// How many kinds there are: the size of a table indexed by a kind's value (LauncherTable).
inline constexpr std::size_t kTaskKindCount = static_cast<std::size_t>(TaskKind::service) + 1;
const char* to_string(TaskKind kind);

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// A 1-based place in a workflow file; line 0 = not from a file (built in code, a trace).
struct SourcePos {
  int line = 0;
  int column = 0;
};

// What to execute. Exactly one form is used: an argv (no shell) or a shell string run by
// /bin/sh -c. Function tasks carry a callable instead (TaskSpec::fn).
struct Command {
  std::vector<std::string> argv;
  std::string shell;

  bool uses_shell() const { return argv.empty(); }
  bool empty() const { return argv.empty() && shell.empty(); }
  // A human-readable one-line form (argv elements joined by spaces, quoted when needed).
  std::string display() const;
};

// The body of a function task. Runs on the in-process launcher's thread pool; a non-ok Status or
// an escaping exception fails the task with its message.
using TaskFunction = std::function<Status()>;

struct TaskSpec {
  TaskId id = kNoTask;
  std::string name;  // unique in its workflow; sweep members are "base[var=value,...]"
  TaskKind kind = TaskKind::executable;
  std::string user;  // owner for fair-share policies; empty = the workflow's user
  // Its job, for fair-share policies (workflow files: the entry's name unless `job:` says
  // otherwise); empty = a job of its own.
  std::string job;
  Resources per_rank{1, 0, 0};
  int ranks = 1;
  // Kind mpi: how many nodes the ranks are spread over (block distribution, like srun -N). 0 = on
  // one node when one has room, else across as few nodes as fit; 1 = never across nodes.
  int nodes = 0;
  Command cmd;
  TaskFunction fn;
  KeyValues env;           // extra environment, on top of the coordinator's
  KeyValues params;        // sweep variables (also exported to the task's environment)
  std::string workdir;     // empty = the run's working directory
  Duration timeout{0};     // 0 = no limit
  Duration kill_grace{0};  // SIGTERM -> SIGKILL when it is stopped; 0 = the launcher's default
  int retries = 0;         // extra attempts after the first failure
  // Container backends (Kubernetes): the image the task runs in and when it is pulled
  // ("Always", "IfNotPresent", "Never"; empty = the cluster's default). Other backends ignore
  // them.
  std::string image;
  std::string image_pull_policy;
  Duration estimate{0};    // expected runtime when known (user, trace, history); 0 = unknown
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // What it moves over the network (network-aware placement); empty = nothing declared.
  DataMovement data;
  std::vector<TaskId> after;  // dependencies: ids of tasks that must succeed first
  // Services (WorkflowGraph::services) whose every replica must be ready before this task starts;
  // it receives their endpoints as CHORUS_SERVICE_<NAME>.
  std::vector<ServiceId> uses;
  ServiceId service = kNoService;  // kind service: the service this task is a replica of
  int replica = 0;                 // kind service: which replica (0-based)
  // Its entry in the workflow file (the name's value; a sweep's members and a repeat group's
  // rounds share their entry's), for located messages after loading.
  SourcePos pos;
  // Also waits for TaskSubmitter::release() before it may start: a repeat group's gate, which
  // tasks after the group depend on, is released when the group's last round is done.
  bool held = false;

  Resources total() const { return per_rank * ranks; }
};

// A 64-bit fingerprint of what the task does: kind, command, env, params, workdir, ranks, cores and
// GPUs (which change how a program runs) — not memory, timeout, retries or estimate (which only
// bound or describe it). Resume reruns a task whose fingerprint changed even if it had succeeded.
// Function tasks hash their name only: their body cannot be compared.
std::uint64_t spec_fingerprint(const TaskSpec& spec);

}  // namespace chorus
