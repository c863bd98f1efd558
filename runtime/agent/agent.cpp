#include "runtime/agent/agent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "adapters/local/local_launcher.hpp"
#include "runtime/agent/agent_protocol.hpp"
#include "runtime/netprobe/socket_util.hpp"
#include "runtime/netprobe/telemetry_sampler.hpp"
#include "runtime/transport/message_socket.hpp"

namespace chorus {
namespace {

std::uint64_t key_of(TaskId task, std::uint32_t attempt) {
  return (std::uint64_t{task} << 32) | attempt;
}

// Before the coordinator answers, refusals are seen only through the socket monitor: look often.
constexpr auto kHandshakeCheck = std::chrono::milliseconds(100);

// The longest a loop turn spends spawning queued launches (and at most half a heartbeat
// interval), after which the loop reads its socket, reports what ended and heartbeats before it
// spawns more. A spawn is ~1 ms on an idle node and was 52 ms on average (187 ms at worst) on
// the 2-core test bed under load, where spawning a batch of 200 at once kept the loop away from
// its socket for 10.5 s: the coordinator declared the agent lost (10 s timeout) while it was
// still spawning.
constexpr auto kSpawnSlice = std::chrono::milliseconds(50);

// How long an exit by a signal the agent did not send (SIGTERM, SIGKILL from outside) is held
// before it is reported. When Slurm ends the agent's job or step (scancel, the walltime, a node
// failure), slurmstepd signals every process of the step in one sweep, the tasks possibly before
// the agent: reported at once, such an exit reads as the task's own failure (143). Held, it is
// reported as lost when the agent's own stop signal follows, and the coordinator can requeue the
// task elsewhere. A sweep takes milliseconds; the hold costs an externally killed task this much
// report latency and nothing else.
constexpr auto kTeardownHold = std::chrono::milliseconds(500);

// Whether `u` is an exit the agent cannot tell from its step being torn down: by a signal Slurm
// sends then (or a shell's 128 + that signal), which the agent's own cancel and timeout kills are
// not (those come back as cancelled and timed_out).
bool killed_from_outside(const StateUpdate& u) {
  if (u.kind != UpdateKind::exited) return false;
  int sig = u.signal != 0 ? u.signal : u.exit_code > 128 ? u.exit_code - 128 : 0;
  return sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP;
}

// Reads up to `max` bytes of `path` from `offset`; size = the file's size. False (and `error`)
// when it cannot be opened.
bool read_piece(const std::string& path, std::uint64_t offset, std::uint64_t max, std::string& data,
                std::uint64_t& size, std::string& error) {
  data.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  if (offset < size) {
    data.resize(static_cast<std::size_t>(std::min<std::uint64_t>(max, size - offset)));
    ssize_t n = ::pread(fd, data.data(), data.size(), static_cast<off_t>(offset));
    data.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  return true;
}

// Whether `path` lies below `dir` (no .. components): the only files a fetch may read.
bool below(const std::string& path, const std::string& dir) {
  if (dir.empty() || path.size() <= dir.size() + 1 || !path.starts_with(dir) ||
      path[dir.size()] != '/') {
    return false;
  }
  return path.find("/../") == std::string::npos && !path.ends_with("/..");
}

class AgentLoop {
 public:
  AgentLoop(const AgentOptions& options, ClientSocket& socket)
      : options_(options), socket_(socket), silence_(options.silence_timeout) {}

  Status run(CancelToken* stop) {
    if (Status s = socket_.send(
            encode_hello({options_.node, options_.capacity, ::getpid(), options_.log_dir}));
        !s.ok()) {
      return s;
    }
    last_heard_ = last_sent_ = Clock::now();
    while (true) {
      if (stop != nullptr && stop->requests() > 0) return stopped_by_signal();
      if (auto done = drain_socket()) return *done;
      if (Status s = spawn_queued(); !s.ok()) return s;
      if (local_) {
        updates_.clear();
        local_->poll(updates_);
        hold_outside_kills(Clock::now());
        if (Status s = send_updates(); !s.ok()) return s;
      }
      auto now = Clock::now();
      if (!welcomed_ && socket_.authentication_refused()) {
        return invalid_argument("the coordinator at " + options_.endpoint +
                                " refused this agent's keys (CURVE authentication failed): "
                                "--keys must be the key folder of the run it serves");
      }
      if (!welcomed_ && socket_.failed_handshakes() >= 2) {
        return invalid_argument("the coordinator at " + options_.endpoint +
                                " refused this agent's keys (it cannot read our CURVE handshake: "
                                "coordinator.pub is another run's): --keys must be the key "
                                "folder of the run it serves");
      }
      // Silence is nothing arrived, not nothing read: a message waiting is read next turn.
      if (now - last_heard_ > silence_ && !socket_.readable()) {
        return Status(ErrorCode::unavailable,
                      std::string(welcomed_ ? "no message from the coordinator at "
                                            : "no answer from a coordinator at ") +
                          options_.endpoint + " for " + format_duration(silence_) +
                          (welcomed_ ? ": it is gone; stopping this node's tasks and exiting"
                                     : " (wrong address, or it is not running)"));
      }
      if (welcomed_ && now - last_telemetry_ >= heartbeat_) {
        if (Status s = send_telemetry(); !s.ok()) return s;
      }
      if (welcomed_ && now - last_sent_ >= heartbeat_) {
        if (Status s = send(encode_empty(AgentMessage::heartbeat)); !s.ok()) return s;
      }
      wait(stop);
    }
  }

 private:
  struct Entry {
    TaskSpec spec;
    LaunchHandle handle = 0;
    int cores = 0;
    int pgid = 0;             // 0 = not known
    std::string stdout_path;  // kept only when node-local, for pushing a failure's output
    std::string stderr_path;
  };

  Status send(const std::string& payload) {
    last_sent_ = Clock::now();
    return socket_.send(payload);
  }

  // Handles every waiting message; a value when the agent must exit.
  std::optional<Status> drain_socket() {
    while (true) {
      auto got = socket_.receive(payload_);
      if (!got.ok()) return got.status();
      if (!*got) return std::nullopt;
      last_heard_ = Clock::now();
      MessageHeader h = message_type(payload_);
      if (!h.ok) {
        if (h.version == kAgentProtocolVersion) continue;  // a message type of a later build
        return invalid_argument("the coordinator at " + options_.endpoint +
                                " speaks agent protocol version " + std::to_string(h.version) +
                                " and this agent version " + std::to_string(kAgentProtocolVersion) +
                                ": run `chorus agent` from the same chorus build as the "
                                "coordinator");
      }
      switch (h.type) {
        case AgentMessage::welcome: {
          AgentWelcome w;
          if (!decode_welcome(payload_, w)) return invalid_argument("malformed welcome message");
          welcomed_ = true;
          heartbeat_ = std::chrono::milliseconds(std::max<std::uint32_t>(10, w.heartbeat_ms));
          silence_ = std::chrono::milliseconds(std::max<std::uint32_t>(100, w.silence_ms));
          local_ = std::make_unique<LocalLauncher>(
              LocalLauncherOptions{std::chrono::milliseconds(w.kill_grace_ms)});
          if (!sampler_) sampler_ = std::make_unique<netprobe::TelemetrySampler>(heartbeat_);
          if (!prober_) prober_ = std::make_unique<netprobe::LinkProber>(options_.probe_budget);
          break;
        }
        case AgentMessage::probe_targets: {
          ProbeTargets t;
          if (!decode_probe_targets(payload_, t)) {
            return invalid_argument("malformed probe_targets message");
          }
          std::vector<netprobe::ProbeTarget> targets;
          for (DataSource& d : t.sources) {
            targets.push_back({std::move(d.name), std::move(d.host), d.port, d.probe});
          }
          if (!prober_) prober_ = std::make_unique<netprobe::LinkProber>(options_.probe_budget);
          prober_->set_targets(std::move(targets), t.generation);
          break;
        }
        case AgentMessage::refused: {
          std::string reason;
          decode_refused(payload_, reason);
          return invalid_argument("the coordinator refused this agent: " + reason);
        }
        case AgentMessage::launch:
          if (Status s = launch_batch(); !s.ok()) return s;
          break;
        case AgentMessage::cancel:
          if (Status s = cancel_batch(); !s.ok()) return s;
          break;
        case AgentMessage::shutdown:
          return Status::ok_status();
        case AgentMessage::fetch:
          if (Status s = answer_fetch(); !s.ok()) return s;
          break;
        default:
          break;  // heartbeats: last_heard_ is enough
      }
    }
  }

  // Queues the message's launches; spawn_queued() starts them a slice per loop turn, so that a
  // batch of any size never holds the loop's heartbeats, updates, cancels or shutdown behind
  // it (the contract: no loop turn spends more than kSpawnSlice spawning).
  Status launch_batch() {
    launches_.clear();
    if (!decode_launches(payload_, launches_)) return invalid_argument("malformed launch message");
    if (!local_) return invalid_argument("launch before welcome");
    for (TaskLaunch& l : launches_) {
      if (options_.dry_run) {
        StateUpdate u;
        u.task = l.task;
        u.attempt = l.attempt;
        u.end_time = wall_seconds_now();
        updates_.push_back(std::move(u));
        continue;
      }
      queued_.push_back(std::move(l));
    }
    return send_updates();
  }

  // Spawns queued launches, in order, for at most one slice (at least one launch).
  Status spawn_queued() {
    if (queued_.empty()) return {};
    const TimePoint until = Clock::now() + std::min<Duration>(kSpawnSlice, heartbeat_ / 2);
    do {
      spawn(queued_.front());
      queued_.pop_front();
    } while (!queued_.empty() && Clock::now() < until);
    return send_updates();
  }

  void spawn(TaskLaunch& l) {
    auto entry = std::make_unique<Entry>();
    TaskSpec& spec = entry->spec;
    spec.id = l.task;
    spec.name = std::move(l.name);
    spec.cmd = std::move(l.cmd);
    spec.env = std::move(l.env);
    spec.timeout = std::chrono::milliseconds(l.timeout_ms);
    LaunchRequest request;
    request.spec = &spec;
    request.attempt = l.attempt;
    request.node = options_.node;
    request.workdir = std::move(l.workdir);
    request.stdout_path = std::move(l.stdout_path);
    request.stderr_path = std::move(l.stderr_path);
    make_parent(request.stdout_path);
    make_parent(request.stderr_path);
    if (below(request.stdout_path, options_.log_dir)) entry->stdout_path = request.stdout_path;
    if (below(request.stderr_path, options_.log_dir)) entry->stderr_path = request.stderr_path;
    auto handle = local_->launch(request);
    if (!handle.ok()) {
      // Reported like a shell would: 127 for a program or folder that does not exist.
      StateUpdate u;
      u.task = l.task;
      u.attempt = l.attempt;
      u.kind = UpdateKind::exited;
      u.exit_code = handle.status().code() == ErrorCode::not_found ? 127 : 126;
      u.message = handle.status().message() + " (on node " + options_.node + ")";
      u.end_time = wall_seconds_now();
      updates_.push_back(std::move(u));
      return;
    }
    entry->handle = *handle;
    entry->cores = l.cores;
    if (auto g = local_->process_group(*handle)) entry->pgid = static_cast<int>(g->pgid);
    running_cores_ += l.cores;
    groups_changed_ = true;
    running_[key_of(l.task, l.attempt)] = std::move(entry);
  }

  // A launch still queued is dropped and reported cancelled at once.
  Status cancel_batch() {
    refs_.clear();
    decode_task_refs(payload_, refs_);
    for (TaskRef r : refs_) {
      auto it = running_.find(key_of(r.task, r.attempt));
      if (it != running_.end()) {
        (void)local_->cancel(it->second->handle);
        continue;
      }
      auto q = std::find_if(queued_.begin(), queued_.end(), [&](const TaskLaunch& l) {
        return l.task == r.task && l.attempt == r.attempt;
      });
      if (q == queued_.end()) continue;
      queued_.erase(q);
      StateUpdate u;
      u.task = r.task;
      u.attempt = r.attempt;
      u.kind = UpdateKind::cancelled;
      u.message = "cancelled before it started";
      u.end_time = wall_seconds_now();
      updates_.push_back(std::move(u));
    }
    return send_updates();
  }

  // The coordinator names files in the run's log folder; on a node without a shared file system
  // that folder exists only once we make it.
  void make_parent(const std::string& path) {
    if (path.empty()) return;
    std::size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return;
    std::string dir = path.substr(0, slash);
    if (made_dirs_.count(dir) != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    made_dirs_.insert(std::move(dir));
  }

  Status answer_fetch() {
    FetchRequest f;
    if (!decode_fetch(payload_, f)) return invalid_argument("malformed fetch message");
    FetchReply r;
    r.request = f.request;
    r.offset = f.offset;
    if (!below(f.path, options_.log_dir)) {
      r.message = "node " + options_.node + " serves only files below " +
                  (options_.log_dir.empty() ? std::string("its --node-logs folder (none set)")
                                            : options_.log_dir);
    } else {
      r.ok = read_piece(f.path, f.offset, std::min(f.max, kFetchChunk), r.data, r.size, r.message);
    }
    return send(encode_fetched(r));
  }

  // A failed attempt's node-local output goes to the coordinator before its update (same
  // connection, so in order): the end of each stream, at most kCollectLimit bytes.
  Status push_output(const StateUpdate& u, const Entry& e) {
    const std::string* paths[2] = {&e.stdout_path, &e.stderr_path};
    for (std::uint8_t stream = 0; stream < 2; ++stream) {
      const std::string& path = *paths[stream];
      if (path.empty()) continue;
      OutputChunk c;
      c.task = u.task;
      c.attempt = u.attempt;
      c.stream = stream;
      c.first = true;
      std::uint64_t size = 0;
      std::string error;
      std::string piece;
      if (!read_piece(path, 0, 0, piece, size, error)) size = 0;  // never written: empty
      std::uint64_t from = size > kCollectLimit ? size - kCollectLimit : 0;
      if (from > 0) {
        c.note = "[chorus: the first " + std::to_string(from) + " bytes of this output stayed on " +
                 "node " + options_.node + " in " + path + "]\n";
      }
      do {
        if (size > from && !read_piece(path, from, kFetchChunk, c.data, size, error)) break;
        from += c.data.size();
        if (Status s = send(encode_output(c)); !s.ok()) return s;
        c.first = false;
        c.note.clear();
      } while (!c.data.empty() && from < size);
    }
    return {};
  }

  // Moves the exits killed_from_outside() out of updates_ into held_, and the held ones whose
  // time is up back into updates_ (kTeardownHold).
  void hold_outside_kills(TimePoint now) {
    auto kept = std::stable_partition(updates_.begin(), updates_.end(),
                                      [](const StateUpdate& u) { return !killed_from_outside(u); });
    for (auto it = kept; it != updates_.end(); ++it) {
      held_.push_back(Held{std::move(*it), now + kTeardownHold});
    }
    updates_.erase(kept, updates_.end());
    while (!held_.empty() && held_.front().until <= now) {
      updates_.push_back(std::move(held_.front().update));
      held_.pop_front();
    }
  }

  // A stop signal (slurmstepd tearing the step down, a Ctrl-C): the coordinator is told this
  // agent is leaving, so it counts every task it sent here lost (held exits included) and places
  // nothing more here, at once instead of after the agent's silence; then the tasks still
  // running are killed (local_'s destructor) and the agent exits.
  Status stopped_by_signal() {
    held_.clear();
    if (welcomed_) {
      socket_.linger_on_close(500);
      (void)send(
          encode_leaving("was stopped by a signal (its Slurm job or step ended, or it was "
                         "interrupted)"));
    }
    return Status(ErrorCode::cancelled, "agent stopped by a signal");
  }

  // Sends updates_ (if any) as one message and forgets their tasks.
  Status send_updates() {
    if (updates_.empty()) return {};
    begin_batch(buffer_, AgentMessage::updates);
    for (const StateUpdate& u : updates_) {
      auto it = running_.find(key_of(u.task, u.attempt));
      if (it != running_.end()) {
        const Entry& e = *it->second;
        bool failed = !u.succeeded() && u.kind != UpdateKind::cancelled;
        if (failed && (!e.stdout_path.empty() || !e.stderr_path.empty())) {
          if (Status s = push_output(u, e); !s.ok()) return s;
        }
        running_cores_ -= e.cores;
        groups_changed_ = true;
        running_.erase(it);
      }
      append_update(buffer_, u);
    }
    updates_.clear();
    return send(buffer_);
  }

  // The node's figures now: the sampler's last sample, the running cores from our own books,
  // the prober's links with their ages.
  Status send_telemetry() {
    last_telemetry_ = Clock::now();
    if (groups_changed_ && sampler_) {
      std::vector<int> groups;
      for (const auto& [key, e] : running_) {
        if (e->pgid > 0) groups.push_back(e->pgid);
      }
      sampler_->set_process_groups(std::move(groups));
      groups_changed_ = false;
    }
    if (sampler_) sampler_->latest(telemetry_);
    telemetry_.running_cores = running_cores_;
    if (prober_) {
      prober_->snapshot(telemetry_, netprobe::steady_seconds());
    } else {
      telemetry_.links.clear();
    }
    return send(encode_telemetry(telemetry_));
  }

  void wait(CancelToken* stop) {
    // A send may have consumed the socket's edge: never block while a message is waiting, nor
    // while launches wait to be spawned.
    if (!queued_.empty() || socket_.readable()) return;
    pollfd fds[3];
    nfds_t n = 0;
    fds[n++] = {socket_.fd(), POLLIN, 0};
    if (local_) fds[n++] = {local_->wait_fd(), POLLIN, 0};
    if (stop != nullptr) fds[n++] = {stop->fd(), POLLIN, 0};
    auto now = Clock::now();
    TimePoint deadline = std::min(last_heard_ + silence_, last_sent_ + heartbeat_);
    if (welcomed_) deadline = std::min(deadline, last_telemetry_ + heartbeat_);
    if (!welcomed_) deadline = std::min(deadline, now + kHandshakeCheck);
    if (local_) {
      if (auto d = local_->next_deadline()) deadline = std::min(deadline, *d);
    }
    if (!held_.empty()) deadline = std::min(deadline, held_.front().until);
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    ::poll(fds, n, static_cast<int>(std::clamp<std::int64_t>(ms, 0, 1000)));
  }

  const AgentOptions& options_;
  ClientSocket& socket_;
  Duration silence_;
  Duration heartbeat_ = std::chrono::seconds(1);
  bool welcomed_ = false;
  TimePoint last_heard_{};
  TimePoint last_sent_{};
  // Telemetry: the collectors' and the probes' threads, created on welcome. Declared before
  // local_ so that, at exit, the tasks are killed first and a probe in flight (bounded by its
  // timeouts) is waited for after.
  std::unique_ptr<netprobe::TelemetrySampler> sampler_;
  std::unique_ptr<netprobe::LinkProber> prober_;
  // Declared before local_ so it outlives it: the launcher reads each task's spec by pointer.
  std::unordered_map<std::uint64_t, std::unique_ptr<Entry>> running_;
  std::unique_ptr<LocalLauncher> local_;  // created on welcome, with the coordinator's grace
  AgentTelemetry telemetry_;
  TimePoint last_telemetry_{};
  int running_cores_ = 0;
  bool groups_changed_ = false;
  std::unordered_set<std::string> made_dirs_;
  std::string payload_;
  std::string buffer_;
  std::vector<TaskLaunch> launches_;
  std::deque<TaskLaunch> queued_;  // received, not spawned yet (spawn_queued)
  std::vector<TaskRef> refs_;
  std::vector<StateUpdate> updates_;
  struct Held {
    StateUpdate update;
    TimePoint until;
  };
  std::deque<Held> held_;  // exits killed from outside, oldest first (hold_outside_kills)
};

}  // namespace

std::string expand_node_log_dir(const std::string& template_dir, const std::string& node) {
  std::string out;
  for (std::size_t i = 0; i < template_dir.size(); ++i) {
    if (template_dir[i] == '%' && i + 1 < template_dir.size() && template_dir[i + 1] == 'n') {
      out += node;
      ++i;
    } else {
      out += template_dir[i];
    }
  }
  if (out.empty()) return out;
  std::error_code ec;
  std::string abs = std::filesystem::absolute(out, ec).lexically_normal().string();
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  return ec ? out : abs;
}

Status run_agent(const AgentOptions& options, CancelToken* stop) {
  if (options.node.empty()) return invalid_argument("the agent needs a node name (--node)");
  AgentOptions resolved = options;
  resolved.log_dir = expand_node_log_dir(options.log_dir, options.node);
  if (!resolved.log_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(resolved.log_dir, ec);
    if (ec) {
      return io_error("cannot create the node's log folder " + resolved.log_dir + ": " +
                      ec.message());
    }
  }
  auto socket = ClientSocket::connect(resolved.endpoint, resolved.keys.coordinator_public,
                                      resolved.keys.agent);
  if (!socket.ok()) return socket.status();
  AgentLoop loop(resolved, **socket);
  return loop.run(stop);
}

}  // namespace chorus
