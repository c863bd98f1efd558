#include "adapters/local/local_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "adapters/local/process_identity.hpp"

extern char** environ;

namespace chorus {
namespace {

// Signals a task starts with at their default disposition even if the launcher ignores them
// (ignored dispositions survive exec; handled ones are reset by exec anyway).
constexpr int kDefaultSignals[] = {SIGINT,  SIGTERM, SIGPIPE, SIGCHLD, SIGHUP,  SIGQUIT, SIGUSR1,
                                   SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU, SIGXFSZ};

std::string os_words(int err) {
  return std::strerror(err);
}

ErrorCode code_for_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return ErrorCode::not_found;
    case EAGAIN:
    case ENOMEM:
      return ErrorCode::unavailable;
    default:
      return ErrorCode::io_error;
  }
}

std::string signal_words(int sig) {
  std::string s = "signal " + std::to_string(sig);
  if (const char* abbrev = sigabbrev_np(sig)) {
    s += " (SIG";
    s += abbrev;
    s += ')';
  }
  return s;
}

// Through syscall(): glibc 2.36's <sys/pidfd.h> lacks extern "C", so C++ cannot link against it.
int open_pidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U));
}

int waitid_retry(pid_t pid, siginfo_t& info, int options) {
  int rc;
  do {
    info = {};
    rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, options);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

}  // namespace

LocalLauncher::LocalLauncher(LocalLauncherOptions options) : options_(options) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    init_error_ = io_error("local launcher cannot start: epoll_create1: " + os_words(errno));
  }

  posix_spawnattr_init(&attr_);
  sigset_t mask;
  sigemptyset(&mask);
  posix_spawnattr_setsigmask(&attr_, &mask);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : kDefaultSignals) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr_, &defaults);
  posix_spawnattr_setpgroup(&attr_, 0);
  posix_spawnattr_setflags(&attr_,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  for (char** e = environ; e != nullptr && *e != nullptr; ++e) base_env_.emplace_back(*e);
  base_envp_.reserve(base_env_.size() + 1);
  for (const std::string& entry : base_env_) {
    std::size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) {
      // The first definition of a name is the one getenv() sees; drop later duplicates.
      if (!base_index_.try_emplace(std::string_view(entry.data(), eq), base_envp_.size()).second) {
        continue;
      }
    }
    base_envp_.push_back(entry.c_str());
  }
  base_envp_.push_back(nullptr);
}

LocalLauncher::~LocalLauncher() {
  for (Proc& p : procs_) {
    if (p.handle != 0) ::kill(-p.pid, SIGKILL);
  }
  for (Proc& p : procs_) {
    if (p.handle == 0) continue;
    siginfo_t info;
    (void)waitid_retry(p.pid, info, WEXITED);
    ::close(p.pidfd);
    drain(p.out);
    drain(p.err);
    close_output(p.out);
    close_output(p.err);
  }
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  posix_spawnattr_destroy(&attr_);
}

namespace {
// epoll data: the task's handle, with the top bits saying which of its descriptors fired.
// Handles are (serial << 32) | slot with serial far below 2^30, so bits 62-63 are free.
constexpr std::uint64_t kStdoutTag = std::uint64_t{1} << 62;
constexpr std::uint64_t kStderrTag = std::uint64_t{2} << 62;
constexpr std::uint64_t kTagMask = std::uint64_t{3} << 62;

// A pipe whose read end is non-blocking and close-on-exec, and whose write end is close-on-exec
// (dup2 onto 1/2 in the child clears that flag on the copy).
bool make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  if (::fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

LocalLauncher::Proc* LocalLauncher::find(LaunchHandle handle) {
  auto slot = static_cast<std::uint32_t>(handle & 0xffffffffU);
  if (slot >= procs_.size() || procs_[slot].handle != handle || handle == 0) return nullptr;
  return &procs_[slot];
}

const char* const* LocalLauncher::build_env(const LaunchRequest& request, Status& error) {
  const TaskSpec& spec = *request.spec;
  std::size_t extra =
      spec.env.size() + spec.params.size() + request.env.size() + run_as_env_.size();
  if (extra == 0) return base_envp_.data();

  // Sized before any pointer is taken: growing it later would move the strings.
  if (env_storage_.size() < extra) env_storage_.resize(extra);
  envp_.assign(base_envp_.begin(), base_envp_.end() - 1);
  extra_index_.clear();
  std::size_t used = 0;
  auto add = [&](const KeyValues& vars, const char* origin) {
    for (const auto& [key, value] : vars) {
      if (key.empty() || key.find('=') != std::string::npos) {
        error = invalid_argument("task '" + spec.name + "': environment variable name '" + key +
                                 "' (from " + origin + ") must be non-empty and contain no '='");
        return false;
      }
      std::string& entry = env_storage_[used++];
      entry.assign(key);
      entry += '=';
      entry += value;
      std::string_view name(entry.data(), key.size());
      if (auto it = base_index_.find(name); it != base_index_.end()) {
        envp_[it->second] = entry.c_str();
        continue;
      }
      auto [it, inserted] = extra_index_.try_emplace(name, envp_.size());
      if (inserted) {
        envp_.push_back(entry.c_str());
      } else {
        envp_[it->second] = entry.c_str();
      }
    }
    return true;
  };
  if (!add(spec.env, "env") || !add(spec.params, "params") ||
      !add(request.env, "the run's environment") || !add(run_as_env_, "the user it runs as")) {
    return nullptr;
  }
  envp_.push_back(nullptr);
  return envp_.data();
}

Status LocalLauncher::describe_spawn_error(int err, const LaunchRequest& request,
                                           const char* program) const {
  // posix_spawn reports the errno of whichever step failed in the child (a file action or the
  // exec) without saying which; only on this path do we spend syscalls to find out.
  if (err == ENOENT || err == ENOTDIR || err == EACCES || err == EISDIR || err == EROFS) {
    if (!request.workdir.empty()) {
      struct stat st;
      if (::stat(request.workdir.c_str(), &st) != 0) {
        int e = errno;
        return {code_for_errno(e), "working directory '" + request.workdir + "': " + os_words(e)};
      }
      if (!S_ISDIR(st.st_mode)) {
        return {ErrorCode::not_found,
                "working directory '" + request.workdir + "' is not a directory"};
      }
      if (::access(request.workdir.c_str(), X_OK) != 0) {
        return io_error("working directory '" + request.workdir + "': " + os_words(errno));
      }
    }
  }
  return {code_for_errno(err), std::string(program) + ": " + os_words(err)};
}

Result<LaunchHandle> LocalLauncher::launch(const LaunchRequest& request) {
  if (!init_error_.ok()) return init_error_;
  if (request.spec == nullptr) return invalid_argument("launch request without a task spec");
  const TaskSpec& spec = *request.spec;
  if (spec.kind == TaskKind::function) {
    return invalid_argument("task '" + spec.name +
                            "' is a function task; the local launcher runs programs");
  }
  if (spec.cmd.empty()) return invalid_argument("task '" + spec.name + "' has no command to run");

  argv_.clear();
  run_as_env_.clear();
  bool search_path = false;
  if (request.run_as != nullptr) {
    // setpriv (util-linux) switches to the user and execs the command in place: the task's pid,
    // process group and start time stay those the launcher watches. posix_spawn cannot switch
    // users itself. Capabilities go with the switch away from root (no keep-caps).
    const RunAs& who = *request.run_as;
    run_as_args_ = {"/usr/bin/setpriv", "--reuid=" + std::to_string(who.uid),
                    "--regid=" + std::to_string(who.gid), "--init-groups", "--"};
    for (std::string& a : run_as_args_) argv_.push_back(a.data());
    run_as_env_ = {{"HOME", who.home}, {"USER", who.name}, {"LOGNAME", who.name}};
  }
  if (spec.cmd.uses_shell()) {
    argv_.push_back(const_cast<char*>("/bin/sh"));
    argv_.push_back(const_cast<char*>("-c"));
    argv_.push_back(const_cast<char*>(spec.cmd.shell.c_str()));
  } else {
    // posix_spawn does not modify argv; the API just predates const.
    for (const std::string& arg : spec.cmd.argv) argv_.push_back(const_cast<char*>(arg.c_str()));
    // Under setpriv, setpriv searches PATH for the command.
    search_path = request.run_as == nullptr && spec.cmd.argv.front().find('/') == std::string::npos;
  }
  argv_.push_back(nullptr);

  Status env_error;
  const char* const* envp = build_env(request, env_error);
  if (envp == nullptr) return env_error;

  const bool want_out = !request.stdout_path.empty();
  const bool shared = want_out && request.stderr_path == request.stdout_path;
  const bool want_err = !request.stderr_path.empty() && !shared;
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if ((want_out && !make_pipe(out_pipe)) || (want_err && !make_pipe(err_pipe))) {
    int e = errno;
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) close_fd(*fd);
    return Status(e == EMFILE || e == ENFILE ? ErrorCode::unavailable : ErrorCode::io_error,
                  "cannot create output pipes for task '" + spec.name + "': " + os_words(e));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int rc = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (rc == 0 && want_out) {
    rc = posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    if (rc == 0 && shared)
      rc = posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDERR_FILENO);
  }
  if (rc == 0 && want_err) {
    rc = posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  }
  if (rc == 0 && !request.workdir.empty()) {
    rc = posix_spawn_file_actions_addchdir_np(&actions, request.workdir.c_str());
  }
  pid_t pid = -1;
  if (rc == 0) {
    auto* env = const_cast<char* const*>(envp);
    rc = search_path ? posix_spawnp(&pid, argv_[0], &actions, &attr_, argv_.data(), env)
                     : posix_spawn(&pid, argv_[0], &actions, &attr_, argv_.data(), env);
  }
  posix_spawn_file_actions_destroy(&actions);
  close_fd(out_pipe[1]);  // the child holds its copies; EOF comes when the task's group is gone
  close_fd(err_pipe[1]);
  if (rc != 0) {
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
  }
  if (rc != 0) return describe_spawn_error(rc, request, argv_[0]);

  auto undo = [&](const char* what, int err) {
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    ::kill(-pid, SIGKILL);
    siginfo_t info;
    (void)waitid_retry(pid, info, WEXITED);
    return Status{ErrorCode::io_error, std::string("local launcher cannot watch task '") +
                                           spec.name + "': " + what + ": " + os_words(err)};
  };
  int pidfd = open_pidfd(pid);
  if (pidfd < 0) return undo("pidfd_open (needs Linux 5.3 or later)", errno);

  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(procs_.size());
    procs_.emplace_back();
  }
  LaunchHandle handle = (++serial_ << 32) | slot;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = handle;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, pidfd, &ev) != 0) {
    int e = errno;
    ::close(pidfd);
    free_slots_.push_back(slot);
    return undo("epoll_ctl", e);
  }

  for (auto [fd, tag] : {std::pair{out_pipe[0], kStdoutTag}, std::pair{err_pipe[0], kStderrTag}}) {
    if (fd < 0) continue;
    epoll_event pev{};
    pev.events = EPOLLIN;
    pev.data.u64 = handle | tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &pev) != 0) {
      int e = errno;
      ::close(pidfd);
      free_slots_.push_back(slot);
      return undo("epoll_ctl", e);
    }
  }

  Proc& p = procs_[slot];
  // Field by field, not `p = Proc{}`: the output paths keep their capacity across slot reuse.
  p.out.pipe = out_pipe[0];
  p.out.file = -1;
  p.out.path.assign(request.stdout_path);
  p.out.error.clear();
  p.err.pipe = err_pipe[0];
  p.err.file = -1;
  p.err.path.assign(want_err ? request.stderr_path : std::string_view{});
  p.err.error.clear();
  p.phase = Phase::running;
  p.reason = UpdateKind::exited;
  p.escalated = false;
  p.heap_pos = kNotInHeap;
  p.handle = handle;
  p.pid = pid;
  p.pidfd = pidfd;
  p.task = spec.id;
  p.attempt = request.attempt;
  p.timeout = spec.timeout;
  p.grace = spec.kill_grace > Duration::zero() ? spec.kill_grace : options_.kill_grace;
  if (spec.timeout > Duration::zero()) heap_set(slot, Clock::now() + spec.timeout);
  ++active_;
  return handle;
}

std::optional<ProcessGroup> LocalLauncher::process_group(LaunchHandle handle) const {
  auto slot = static_cast<std::uint32_t>(handle & 0xffffffffU);
  if (handle == 0 || slot >= procs_.size() || procs_[slot].handle != handle) return std::nullopt;
  const pid_t pid = procs_[slot].pid;
  auto start = process_start_ticks(pid);
  if (!start) return std::nullopt;
  return ProcessGroup{pid, *start};
}

void LocalLauncher::signal_group(Proc& p, int sig) {
  ::kill(-p.pid, sig);
}

void LocalLauncher::poll(std::vector<StateUpdate>& out) {
  // Ended processes first: one that ended on its own keeps its outcome even if its deadline
  // passed meanwhile.
  epoll_event events[64];
  for (;;) {
    int n = ::epoll_wait(epoll_fd_, events, 64, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (int i = 0; i < n; ++i) {
      std::uint64_t data = events[i].data.u64;
      Proc* p = find(data & ~kTagMask);
      if (p == nullptr) continue;  // ended earlier in this batch
      switch (data & kTagMask) {
        case kStdoutTag:
          drain(p->out);
          break;
        case kStderrTag:
          drain(p->err);
          break;
        default:
          reap(*p, out);
      }
    }
    if (n < 64) break;
  }

  if (heap_.empty()) return;
  TimePoint now = Clock::now();
  while (!heap_.empty() && procs_[heap_.front()].due <= now) {
    std::uint32_t slot = heap_.front();
    Proc& p = procs_[slot];
    if (p.phase == Phase::running) {
      p.reason = UpdateKind::timed_out;
      p.phase = Phase::terminating;
      signal_group(p, SIGTERM);
      heap_set(slot, now + p.grace);
    } else {
      p.phase = Phase::killed;
      p.escalated = true;
      signal_group(p, SIGKILL);
      heap_remove(slot);
    }
  }
}

void LocalLauncher::reap(Proc& p, std::vector<StateUpdate>& out) {
  // The unreaped leader still holds the pgid, so this cannot hit a recycled group.
  signal_group(p, SIGKILL);
  siginfo_t info;
  int rc = waitid_retry(p.pid, info, WEXITED | WNOHANG);
  if (rc == 0 && info.si_pid == 0) return;  // not ended after all; the pidfd stays watched

  // The group is gone (or going): what it wrote is in the pipes now.
  drain(p.out);
  drain(p.err);

  StateUpdate u;
  u.task = p.task;
  u.attempt = p.attempt;
  u.end_time = wall_seconds_now();
  if (rc != 0) {
    u.kind = UpdateKind::lost;
    u.message = "process " + std::to_string(p.pid) + " was reaped outside the launcher (" +
                os_words(errno) + "); is SIGCHLD ignored or waitpid(-1) used by the application?";
  } else {
    u.kind = p.reason;
    if (info.si_code == CLD_EXITED) {
      u.exit_code = info.si_status;
    } else {
      u.signal = info.si_status;
    }
    switch (u.kind) {
      case UpdateKind::timed_out:
        u.message = "timed out after " + format_duration(p.timeout);
        break;
      case UpdateKind::cancelled:
        u.message = "cancelled";
        break;
      default:
        if (u.signal != 0) {
          u.message = "killed by " + signal_words(u.signal);
          if (info.si_code == CLD_DUMPED) u.message += " (core dumped)";
        } else if (u.exit_code != 0) {
          u.message = "exited with code " + std::to_string(u.exit_code);
        }
    }
    if (p.escalated) {
      u.message += "; SIGKILLed after ignoring SIGTERM for " + format_duration(p.grace);
    }
  }
  for (const Output* o : {&p.out, &p.err}) {
    if (o->error.empty()) continue;
    if (!u.message.empty()) u.message += "; ";
    u.message += "output lost: " + o->error;
  }
  out.push_back(std::move(u));
  release(p);
}

void LocalLauncher::drain(Output& o) {
  if (o.pipe < 0) return;
  if (buffer_.empty()) buffer_.resize(64 * 1024);
  for (;;) {
    ssize_t n = ::read(o.pipe, buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;   // EAGAIN: nothing more for now
    if (n == 0) {        // every writer is gone
      close_fd(o.pipe);  // also drops it from the epoll set
      return;
    }
    if (o.file < 0 && o.error.empty()) {
      o.file = ::open(o.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      if (o.file < 0) o.error = "cannot create '" + o.path + "': " + os_words(errno);
    }
    if (o.file < 0) continue;  // drop the data, keep the task from blocking on a full pipe
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(o.file, buffer_.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        o.error = "cannot write '" + o.path + "': " + os_words(errno);
        close_fd(o.file);
        break;
      }
      done += w;
    }
  }
}

void LocalLauncher::close_output(Output& o) {
  close_fd(o.pipe);
  close_fd(o.file);
}

void LocalLauncher::release(Proc& p) {
  auto slot = static_cast<std::uint32_t>(p.handle & 0xffffffffU);
  heap_remove(slot);
  // A process that left the task's group may still hold a pipe: what it writes later is lost.
  close_output(p.out);
  close_output(p.err);
  ::close(p.pidfd);  // also drops it from the epoll set
  p.handle = 0;
  p.pidfd = -1;
  free_slots_.push_back(slot);
  --active_;
}

Status LocalLauncher::cancel(LaunchHandle handle) {
  Proc* p = find(handle);
  if (p == nullptr || p->phase != Phase::running) return Status::ok_status();
  // Ended but not polled yet: leave it its own outcome.
  siginfo_t info;
  if (waitid_retry(p->pid, info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
    return Status::ok_status();
  }
  p->reason = UpdateKind::cancelled;
  p->phase = Phase::terminating;
  signal_group(*p, SIGTERM);
  heap_set(static_cast<std::uint32_t>(handle & 0xffffffffU), Clock::now() + p->grace);
  return Status::ok_status();
}

std::optional<TimePoint> LocalLauncher::next_deadline() const {
  if (heap_.empty()) return std::nullopt;
  return procs_[heap_.front()].due;
}

void LocalLauncher::heap_set(std::uint32_t slot, TimePoint due) {
  Proc& p = procs_[slot];
  p.due = due;
  if (p.heap_pos == kNotInHeap) {
    p.heap_pos = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back(slot);
  }
  heap_sift_up(p.heap_pos);
  heap_sift_down(p.heap_pos);
}

void LocalLauncher::heap_remove(std::uint32_t slot) {
  std::uint32_t pos = procs_[slot].heap_pos;
  if (pos == kNotInHeap) return;
  auto last = static_cast<std::uint32_t>(heap_.size() - 1);
  if (pos != last) heap_swap(pos, last);
  heap_.pop_back();
  procs_[slot].heap_pos = kNotInHeap;
  if (pos < heap_.size()) {
    std::uint32_t moved = heap_[pos];
    heap_sift_up(pos);
    heap_sift_down(procs_[moved].heap_pos);
  }
}

void LocalLauncher::heap_sift_up(std::uint32_t pos) {
  while (pos > 0) {
    std::uint32_t parent = (pos - 1) / 2;
    if (!(procs_[heap_[pos]].due < procs_[heap_[parent]].due)) break;
    heap_swap(pos, parent);
    pos = parent;
  }
}

void LocalLauncher::heap_sift_down(std::uint32_t pos) {
  auto n = static_cast<std::uint32_t>(heap_.size());
  for (;;) {
    std::uint32_t smallest = pos;
    for (std::uint32_t child : {2 * pos + 1, 2 * pos + 2}) {
      if (child < n && procs_[heap_[child]].due < procs_[heap_[smallest]].due) smallest = child;
    }
    if (smallest == pos) return;
    heap_swap(pos, smallest);
    pos = smallest;
  }
}

void LocalLauncher::heap_swap(std::uint32_t a, std::uint32_t b) {
  std::swap(heap_[a], heap_[b]);
  procs_[heap_[a]].heap_pos = a;
  procs_[heap_[b]].heap_pos = b;
}

}  // namespace chorus
