// LocalLauncher: runs executable tasks as processes on this machine.
//
// Design assumptions:
// - No thread and no helper process per task. Each child is spawned with posix_spawn into its own
//   process group (pgid = pid); its exit is watched through a pidfd registered in one epoll set,
//   so wait_fd() is that epoll fd and poll() reaps only the children it launched (waitid on the
//   pid). It never calls waitpid(-1), so an embedding application may keep children of its own;
//   it must not ignore SIGCHLD (the kernel would reap our children first; those tasks are then
//   reported `lost`).
// - Every task runs as a process group and is cleaned up as one: when the leader ends, whatever
//   is left of its group is SIGKILLed before the leader is reaped (the unreaped leader keeps the
//   pgid from being reused), so a task never leaves stray processes behind. Timeouts and cancel()
//   send SIGTERM to the group, then SIGKILL after the grace period.
// - The environment of the launching process is captured once, at construction.
//
// Threading: like every Launcher, all methods are called from one thread.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/status.hpp"
#include "core/units.hpp"

namespace chorus {

struct LocalLauncherOptions {
  // How long a process group may take to end after SIGTERM (timeout or cancel) before SIGKILL.
  Duration kill_grace = std::chrono::seconds(5);
};

class LocalLauncher final : public Launcher {
 public:
  explicit LocalLauncher(LocalLauncherOptions options = {});
  // SIGKILLs every process group still running and reaps the leaders: never leaves orphans.
  ~LocalLauncher() override;

  LocalLauncher(const LocalLauncher&) = delete;
  LocalLauncher& operator=(const LocalLauncher&) = delete;

  std::string_view name() const override { return "local"; }

  // Spawns spec->cmd (argv, or `/bin/sh -c shell`); argv[0] without '/' is searched in PATH.
  // stdin is /dev/null; stdout/stderr go through pipes to request.stdout_path/stderr_path, which
  // are created (truncated) by poll() when the first byte arrives: a stream that stays silent
  // leaves no file. An empty path inherits the launcher's stream; the same path for both shares
  // one file. A relative path names a file relative to the launcher's cwd, while a relative
  // program ("./gen") resolves against request.workdir.
  // Environment, later wins: the captured environment, spec->env, spec->params, request.env.
  // Errors: invalid_argument (no spec, not an executable task, empty command, bad variable name);
  // not_found (program, workdir or an output directory missing: "./gen: No such file or
  // directory"); unavailable (the system is out of processes or memory: retry later);
  // io_error (anything else the OS refused).
  Result<LaunchHandle> launch(const LaunchRequest& request) override;

  // Reaps ended children, then enforces timeouts and kill escalations that are due.
  void poll(std::vector<StateUpdate>& out) override;

  // SIGTERM to the task's group, SIGKILL after the grace. Idempotent: a repeated cancel, or one
  // for a task already being killed for its timeout, changes nothing. A task that had already
  // ended on its own when cancel() is called keeps its own outcome.
  Status cancel(LaunchHandle handle) override;

  int wait_fd() const override { return epoll_fd_; }
  std::optional<TimePoint> next_deadline() const override;
  std::size_t in_flight() const override { return active_; }
  // The task's group (pgid = the leader's pid) and the leader's start time from /proc: one read
  // of /proc/<pid>/stat per call. The leader is not reaped before its final update is polled, so
  // the pid cannot be reused while this answers.
  std::optional<ProcessGroup> process_group(LaunchHandle handle) const override;

 private:
  enum class Phase : std::uint8_t { running, terminating, killed };

  // A task's stdout or stderr: the read end of a pipe the task writes to, and the file its data
  // goes to, created on the first byte (a task that prints nothing costs no file: creating
  // thousands of files is what dominated launching short tasks, and on a parallel file system it
  // is a metadata-server round trip each).
  struct Output {
    int pipe = -1;  // read end, non-blocking, in the epoll set; -1 when closed
    int file = -1;  // -1 until the first byte arrives
    std::string path;
    std::string error;  // why the file could not be written; its data is dropped then
  };

  struct Proc {
    LaunchHandle handle = 0;  // 0 = free slot
    pid_t pid = -1;
    int pidfd = -1;
    TaskId task = kNoTask;
    std::uint32_t attempt = 0;
    Phase phase = Phase::running;
    UpdateKind reason = UpdateKind::exited;  // timed_out / cancelled once one of those started
    bool escalated = false;                  // SIGKILL was needed after SIGTERM
    Duration timeout{0};
    Duration grace{0};  // SIGTERM -> SIGKILL for this process
    TimePoint due{};    // valid while heap_pos != kNotInHeap
    std::uint32_t heap_pos = kNotInHeap;
    Output out;
    Output err;  // unused (pipe -1) when stderr shares stdout's file
  };
  static constexpr std::uint32_t kNotInHeap = ~std::uint32_t{0};

  Proc* find(LaunchHandle handle);
  const char* const* build_env(const LaunchRequest& request, Status& error);
  Status describe_spawn_error(int err, const LaunchRequest& request, const char* program) const;
  void reap(Proc& p, std::vector<StateUpdate>& out);
  void release(Proc& p);
  // Moves what the pipe holds into the output file; closes the pipe at end of file.
  void drain(Output& o);
  void close_output(Output& o);
  void signal_group(Proc& p, int sig);

  // Indexed binary min-heap of slots ordered by Proc::due: O(log n) insert, update and removal.
  void heap_set(std::uint32_t slot, TimePoint due);
  void heap_remove(std::uint32_t slot);
  void heap_sift_up(std::uint32_t pos);
  void heap_sift_down(std::uint32_t pos);
  void heap_swap(std::uint32_t a, std::uint32_t b);

  LocalLauncherOptions options_;
  int epoll_fd_ = -1;
  Status init_error_;
  posix_spawnattr_t attr_;  // the same for every child: built once

  // Slot table: handle = (serial << 32) | slot, so lookups are O(1) and handles never repeat.
  std::vector<Proc> procs_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t serial_ = 0;
  std::size_t active_ = 0;
  std::vector<std::uint32_t> heap_;

  // The environment captured at construction, and an index from variable name to its position.
  std::vector<std::string> base_env_;
  std::vector<const char*> base_envp_;
  std::unordered_map<std::string_view, std::size_t> base_index_;

  // Scratch reused across launches so a steady stream of launches does not allocate.
  std::vector<const char*> envp_;
  std::vector<std::string> env_storage_;
  std::unordered_map<std::string_view, std::size_t> extra_index_;
  std::vector<char*> argv_;
  // A task run as another user (LaunchRequest::run_as): setpriv's options and that user's
  // HOME/USER/LOGNAME.
  std::vector<std::string> run_as_args_;
  KeyValues run_as_env_;
  std::vector<char> buffer_;  // one copy buffer for every pipe (64 KiB)
};

}  // namespace chorus
