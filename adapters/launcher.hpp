// Launcher: the one interface every way of running work implements (local processes, the
// in-process thread pool, agents, Slurm steps, MPI, Kubernetes).
//
// Threading: all methods are called from the coordinator's thread only. Implementations may use
// threads inside; results come back only through poll().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/service_spec.hpp"
#include "core/status.hpp"
#include "core/task_spec.hpp"
#include "core/units.hpp"

namespace chorus {

// Ranks of one MPI task on one node, when the task spans several nodes.
struct NodeRanks {
  std::string node;
  int ranks = 0;

  bool operator==(const NodeRanks&) const = default;
};

// A Unix user a task runs as (a served instance running as root runs each run's tasks as its
// submitter).
struct RunAs {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string name;  // the login name: its groups (initgroups), HOME, USER, LOGNAME
  std::string home;
};

struct LaunchRequest {
  const TaskSpec* spec = nullptr;  // owned by the caller; valid until the final update is polled
  std::uint32_t attempt = 1;       // 1 for the first try
  std::string node;                // where placement put it (the first node when it spans)
  // Kind mpi placed across several nodes: each node and how many of the ranks run there, in
  // rank order, summing to spec->ranks. Empty: every rank on `node`.
  std::vector<NodeRanks> spread;
  std::string workdir;      // absolute; already resolved from run and task
  std::string stdout_path;  // files the task's output goes to (created/truncated)
  std::string stderr_path;
  KeyValues env;  // added on top of the launcher's environment and spec->env (CHORUS_* etc.)
  // Kind service: what the replicas of its service share (the readiness probe, its port), for a
  // launcher that hands the probe to its site (Kubernetes' readinessProbe). Null otherwise.
  const ServiceSpec* service = nullptr;
  // Who the task runs as; null = the launcher's own user. A launcher that cannot switch users
  // fails the launch with that reason rather than run it as itself.
  const RunAs* run_as = nullptr;
};

// Opaque per launcher; never reused within one launcher's lifetime.
using LaunchHandle = std::uint64_t;

// What a launcher that checks a service replica's readiness itself knows of it (Kubernetes: the
// kubelet runs the readinessProbe; the Pod's IP and Ready condition come through the watch).
struct ReplicaReadiness {
  std::string address;  // where the replica listens (an IP address); empty while not known
  bool ready = false;   // the launcher's own check passed
  std::string detail;   // while not ready: why, in the site's words (for the start-up timeout)
};

// The process group a task runs as on this host: its leader's pid (the pgid) and the leader's
// start time (clock ticks since boot, field 22 of /proc/<pid>/stat), which tells the leader apart
// from a later process that reuses the pid.
struct ProcessGroup {
  std::int64_t pgid = 0;
  std::uint64_t start_ticks = 0;
};

enum class UpdateKind : std::uint8_t {
  exited,     // the process (or function) ended; exit_code / signal say how
  timed_out,  // killed because spec->timeout passed
  cancelled,  // killed because cancel() was called
  lost,       // the launcher lost track of it (node gone); outcome unknown
};

const char* to_string(UpdateKind kind);

struct StateUpdate {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
  UpdateKind kind = UpdateKind::exited;
  int exit_code = 0;    // valid when kind == exited and signal == 0
  int signal = 0;       // the signal that ended it, 0 if none
  std::string message;  // why it failed, for the user ("killed by signal 9", an exception text)
  double end_time = 0;  // wall seconds

  bool succeeded() const { return kind == UpdateKind::exited && signal == 0 && exit_code == 0; }
};

class Launcher {
 public:
  virtual ~Launcher() = default;

  virtual std::string_view name() const = 0;

  // Starts the work without waiting for it. A failure that happens before anything runs (the
  // program does not exist, the cwd is missing) is returned here, with the OS's words
  // ("./gen: No such file or directory"); the coordinator fails that attempt with it.
  virtual Result<LaunchHandle> launch(const LaunchRequest& request) = 0;

  // Sends what launch() buffered (a launcher that batches, e.g. one message per agent). The
  // coordinator calls it once after each round's launches; launch() alone must not be assumed to
  // have started anything before flush().
  virtual void flush() {}

  // Appends every update that happened since the last call. Never blocks. Also where the launcher
  // enforces timeouts and escalates cancellation (SIGTERM, then SIGKILL after the grace period), so
  // the coordinator calls it at least by next_deadline().
  virtual void poll(std::vector<StateUpdate>& out) = 0;

  // Asks the work to stop; its final update (cancelled) comes through poll(). Idempotent; an
  // unknown or finished handle is not an error.
  virtual Status cancel(LaunchHandle handle) = 0;

  // A file descriptor that becomes readable when poll() has something to return, or -1.
  virtual int wait_fd() const { return -1; }

  // When poll() must be called next even if wait_fd() stays quiet (a timeout, a kill grace).
  virtual std::optional<TimePoint> next_deadline() const { return std::nullopt; }

  // Number of launched tasks whose final update has not been polled yet.
  virtual std::size_t in_flight() const = 0;

  // The local process group a launched task runs as, while its final update has not been polled;
  // nullopt when the work is not a process group on this host (threads, agents, batch steps) or is
  // already gone. The coordinator journals it so a resume can kill what a killed coordinator left.
  virtual std::optional<ProcessGroup> process_group(LaunchHandle /*handle*/) const {
    return std::nullopt;
  }

  // A launched service replica whose readiness the launcher checks itself: what it knows now,
  // while its final update has not been polled. nullopt (every launcher but Kubernetes): the
  // coordinator probes the replica itself at its node's address. Cheap (no I/O): the service
  // supervisor asks at each probe interval.
  virtual std::optional<ReplicaReadiness> readiness(LaunchHandle /*handle*/) const {
    return std::nullopt;
  }
};

}  // namespace chorus
