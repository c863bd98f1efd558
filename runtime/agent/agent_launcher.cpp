#include "runtime/agent/agent_launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "runtime/agent/agent_protocol.hpp"
#include "runtime/transport/message_socket.hpp"

namespace chorus {
namespace {

LaunchHandle handle_of(TaskId task, std::uint32_t attempt) {
  return (std::uint64_t{task} << 32) | attempt;
}

std::uint32_t millis(Duration d) {
  return static_cast<std::uint32_t>(
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(d).count()));
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

constexpr std::size_t kMaxPendingFetches = 64;
constexpr std::string_view kNodeUser = "node:";
constexpr std::string_view kSlotUser = "slot:";
constexpr std::string_view kControlUser = "control";

std::string_view parent_of(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

std::string_view file_of(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The name a key folder of a node may have: a file name that is not hidden.
bool usable_folder_name(const std::string& name) {
  return !name.empty() && name.front() != '.' && name.find('/') == std::string::npos;
}

Status append_line(const std::string& path, const std::string& line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot write " + path + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) return io_error("cannot write " + path);
  return {};
}

}  // namespace

AgentLauncher::AgentLauncher(AgentLauncherOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<AgentLauncher>> AgentLauncher::start(AgentLauncherOptions options) {
  if (options.key_dir.empty()) return invalid_argument("the agent launcher needs a key folder");
  for (const auto& n : options.agent_nodes) {
    if (!usable_folder_name(n)) {
      return invalid_argument("node name '" + n + "' cannot name a key folder");
    }
  }
  std::error_code ec;
  options.key_dir = std::filesystem::absolute(options.key_dir, ec).lexically_normal().string();
  while (options.key_dir.size() > 1 && options.key_dir.back() == '/') options.key_dir.pop_back();
  auto server = generate_curve_keypair();
  if (!server.ok()) return server.status();
  std::unique_ptr<AgentLauncher> l(new AgentLauncher(std::move(options)));
  const std::string& dir = l->options_.key_dir;
  // The run's folder is private before anything secret is written below it.
  std::filesystem::create_directories(dir, ec);
  if (ec || ::chmod(dir.c_str(), 0700) != 0) {
    return io_error("cannot create a private key folder " + dir +
                    (ec ? ": " + ec.message() : ": " + std::string(std::strerror(errno))));
  }
  ServerSocketOptions so;
  so.endpoint = l->options_.listen;
  so.keys = *server;
  // One folder per client: the pair is written there and admitted under the user id `user`.
  auto issue = [&](const std::string& folder, const std::string& user) -> Status {
    auto pair = generate_curve_keypair();
    if (!pair.ok()) return pair.status();
    if (Status s = write_agent_keys(folder, {server->public_key, *pair}); !s.ok()) return s;
    so.allowed_peers.push_back({pair->public_key, user});
    return {};
  };
  std::vector<std::pair<std::string, std::string>> clients;  // folder, user id
  for (const auto& n : l->options_.agent_nodes) {
    clients.emplace_back(dir + "/" + n, std::string(kNodeUser) + n);
  }
  for (std::size_t k = 1; k <= l->options_.agent_slots; ++k) {
    std::string slot = "agent-" + std::to_string(k);
    clients.emplace_back(dir + "/" + slot, std::string(kSlotUser) + slot);
  }
  if (clients.empty()) clients.emplace_back(dir, "agent");  // the shared pair: any name
  clients.emplace_back(dir + "/.control", std::string(kControlUser));
  for (const auto& [folder, user] : clients) {
    if (Status s = issue(folder, user); !s.ok()) return s;
  }
  auto socket = ServerSocket::bind(so);
  if (!socket.ok()) return socket.status();
  l->socket_ = std::move(*socket);
  l->endpoint_ = l->socket_->endpoint();
  // `chorus logs` reaches the coordinator here; a path too long for a Unix socket only costs
  // live fetches (chorus logs says so), not the run.
  std::string sock = dir + "/control.sock";
  if (sock.size() < sizeof(sockaddr_un{}.sun_path) && l->socket_->bind_more("ipc://" + sock).ok()) {
    l->control_endpoint_ = "ipc://" + sock;
  }
  return l;
}

AgentLauncher::~AgentLauncher() {
  if (socket_) shutdown_agents();
  socket_.reset();
  std::error_code ec;
  if (!options_.key_dir.empty()) std::filesystem::remove_all(options_.key_dir, ec);
}

void AgentLauncher::shutdown_agents() {
  const std::string bye = encode_empty(AgentMessage::shutdown);
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    if (agents_[i].info.alive) (void)send_to(i, bye);
    agents_[i].info.alive = false;
  }
  by_peer_.clear();
}

bool AgentLauncher::send_to(std::size_t agent, const std::string& payload) {
  Agent& a = agents_[agent];
  a.last_sent = Clock::now();
  return socket_->send(a.peer, payload).ok();
}

void AgentLauncher::serve() {
  while (true) {
    auto got = socket_->receive(peer_, payload_, &user_, &address_);
    if (!got.ok() || !*got) break;
    on_message(peer_, payload_, user_);
  }
  more_input_ = false;
}

void AgentLauncher::on_message(const std::string& peer, const std::string& payload,
                               const std::string& user) {
  MessageHeader h = message_type(payload);
  if (!h.ok) {
    if (h.version == kAgentProtocolVersion) return;  // a message type of a later build
    // Worded for the agent's user, in a refusal the agent's own version can read.
    (void)socket_->send(
        peer,
        encode_refused_for(
            h.version, "this agent speaks agent protocol version " + std::to_string(h.version) +
                           " and the coordinator version " + std::to_string(kAgentProtocolVersion) +
                           ": run `chorus agent` from the same chorus build as the "
                           "coordinator (chorus run / chorus launch)"));
    return;
  }
  if (user == kControlUser) {
    if (h.type == AgentMessage::control_fetch) {
      on_control(peer, payload);
    } else if (h.type == AgentMessage::hello) {
      (void)socket_->send(peer, encode_refused("this key may not register an agent"));
    }
    return;
  }
  if (h.type == AgentMessage::hello) {
    on_hello(peer, payload, user);
    return;
  }
  auto it = by_peer_.find(peer);
  if (it == by_peer_.end()) {
    // A lost agent that came back, or one that never registered: its work was given away.
    (void)socket_->send(peer, encode_empty(AgentMessage::shutdown));
    return;
  }
  Agent& a = agents_[it->second];
  a.last_heard = Clock::now();
  if (h.type == AgentMessage::fetched) {
    on_fetched(it->second, payload);
    return;
  }
  if (h.type == AgentMessage::output) {
    on_output(it->second, payload);
    return;
  }
  if (h.type == AgentMessage::telemetry) {
    on_telemetry(it->second, payload);
    return;
  }
  if (h.type == AgentMessage::leaving) {
    std::string why;
    if (!decode_leaving(payload, why)) why = "said it is stopping";
    declare_lost(it->second, why);
    return;
  }
  if (h.type != AgentMessage::updates) return;  // heartbeats: last_heard is enough
  decoded_.clear();
  if (!decode_updates(payload, decoded_)) return;
  for (StateUpdate& u : decoded_) {
    auto f = in_flight_.find(handle_of(u.task, u.attempt));
    if (f == in_flight_.end() || f->second != it->second) continue;  // stale or not its task
    if (!collect_.empty()) collect_.erase(f->first);
    in_flight_.erase(f);
    a.info.running -= 1;
    pending_.push_back(std::move(u));
  }
}

void AgentLauncher::on_telemetry(std::size_t agent, const std::string& payload) {
  // A malformed one is dropped whole: the last good snapshot stays, and ages.
  if (!decode_telemetry(payload, telemetry_in_)) return;
  Agent& a = agents_[agent];
  std::swap(a.telemetry, telemetry_in_);
  a.telemetry_serial = ++telemetry_serial_;
}

void AgentLauncher::set_probe_targets(std::span<const DataSource> sources) {
  probe_targets_ = encode_probe_targets(++probe_generation_, sources);
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    if (agents_[i].info.alive) (void)send_to(i, probe_targets_);
  }
}

AgentLauncher::NodeTelemetry AgentLauncher::node_telemetry(const std::string& node) const {
  auto it = by_node_.find(node);
  if (it == by_node_.end()) return {};
  const Agent& a = agents_[it->second];
  if (a.telemetry_serial == 0) return {};
  return {&a.telemetry, a.telemetry_serial};
}

void AgentLauncher::on_output(std::size_t agent, const std::string& payload) {
  OutputChunk c;
  if (!decode_output(payload, c)) return;
  LaunchHandle handle = handle_of(c.task, c.attempt);
  auto f = in_flight_.find(handle);
  auto paths = collect_.find(handle);
  if (f == in_flight_.end() || f->second != agent || paths == collect_.end()) return;
  const std::string& path = c.stream == 0 ? paths->second.out : paths->second.err;
  if (path.empty()) return;
  // A local file in the run's own folder; bounded by kFetchChunk per message and kCollectLimit
  // per stream (the agent sends no more).
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (c.first ? O_TRUNC : O_APPEND), 0644);
  if (fd < 0) return;
  if (!c.note.empty()) (void)!::write(fd, c.note.data(), c.note.size());
  if (!c.data.empty()) (void)!::write(fd, c.data.data(), c.data.size());
  ::close(fd);
}

void AgentLauncher::on_control(const std::string& peer, const std::string& payload) {
  FetchRequest f;
  FetchReply r;
  if (!decode_fetch(payload, f)) return;
  r.request = f.request;
  r.offset = f.offset;
  auto it = by_node_.find(f.node);
  if (it == by_node_.end() || !agents_[it->second].info.alive) {
    r.message = it == by_node_.end() ? "node " + f.node + " has no agent in this run"
                                     : "the agent on node " + f.node + " is lost";
  } else if (agents_[it->second].log_dir.empty()) {
    r.message = "the agent on node " + f.node + " keeps no node-local output (no --node-logs)";
  } else if (fetches_.size() >= kMaxPendingFetches) {
    r.message = "the coordinator has " + std::to_string(fetches_.size()) +
                " fetches in progress; try again";
  } else {
    std::uint64_t id = ++next_fetch_;
    std::uint32_t max = std::min(std::max<std::uint32_t>(f.max, 1), kFetchChunk);
    fetches_[id] = {peer, f.request, it->second, f.offset, max};
    FetchRequest forward{id, "", f.path, f.offset, max};
    if (send_to(it->second, encode_fetch(AgentMessage::fetch, forward))) return;
    fetches_.erase(id);
    r.message = "the agent on node " + f.node + " is disconnected";
  }
  (void)socket_->send(peer, encode_fetched(r));
}

void AgentLauncher::on_fetched(std::size_t agent, const std::string& payload) {
  FetchReply r;
  if (!decode_fetched(payload, r)) return;
  auto it = fetches_.find(r.request);
  if (it == fetches_.end() || it->second.agent != agent) return;
  PendingFetch p = std::move(it->second);
  fetches_.erase(it);
  r.request = p.client_request;
  // Relayed only if it is the piece asked for: the client trusts these lengths.
  if (r.ok && (r.offset != p.offset || r.data.size() > p.max ||
               (!r.data.empty() && r.offset + r.data.size() > r.size))) {
    r = FetchReply{p.client_request, false, "the agent sent a malformed piece", 0, p.offset, {}};
  }
  (void)socket_->send(p.client, encode_fetched(r));
}

void AgentLauncher::fail_fetches(std::size_t agent, const std::string& why) {
  for (auto it = fetches_.begin(); it != fetches_.end();) {
    if (it->second.agent != agent) {
      ++it;
      continue;
    }
    FetchReply r{it->second.client_request, false, why, 0, it->second.offset, {}};
    (void)socket_->send(it->second.client, encode_fetched(r));
    it = fetches_.erase(it);
  }
}

void AgentLauncher::note_node_logs(Agent& a, const std::string& shared_dir,
                                   const std::string& node_dir) {
  a.noted_in = shared_dir;
  const std::string path = shared_dir + "/.node-logs";
  bool fresh = control_noted_.emplace(shared_dir, true).second;
  if (fresh && !control_endpoint_.empty()) {
    (void)append_line(path, "control\t" + control_endpoint_ + "\n");
  }
  (void)append_line(path, "node\t" + a.info.node.name + "\t" + node_dir + "\n");
}

void AgentLauncher::on_hello(const std::string& peer, const std::string& payload,
                             const std::string& user) {
  AgentHello hello;
  if (!decode_hello(payload, hello) || hello.node.empty()) {
    (void)socket_->send(peer, encode_refused("malformed registration"));
    return;
  }
  // Each key is bound to one node: the name registered must be the key's.
  std::string_view key_user(user);
  std::string slot;
  if (key_user.starts_with(kNodeUser)) {
    std::string_view owner = key_user.substr(kNodeUser.size());
    if (owner != hello.node) {
      (void)socket_->send(peer, encode_refused("this agent's key is node " + std::string(owner) +
                                               "'s, not node " + hello.node + "'s"));
      return;
    }
  } else if (key_user.starts_with(kSlotUser)) {
    slot = std::string(key_user.substr(kSlotUser.size()));
    auto bound = slot_nodes_.find(slot);
    if (bound != slot_nodes_.end() && bound->second != hello.node) {
      (void)socket_->send(peer, encode_refused("the key " + slot + " is bound to node " +
                                               bound->second + ", not " + hello.node));
      return;
    }
  } else if (key_user != "agent") {
    (void)socket_->send(peer, encode_refused("this key may not register an agent"));
    return;
  }
  if (frozen_ && std::find(expected_.begin(), expected_.end(), hello.node) == expected_.end()) {
    (void)socket_->send(
        peer, encode_refused("node '" + hello.node + "' is not one of this run's nodes (" +
                             join(expected_) + ")"));
    return;
  }
  if (auto n = by_node_.find(hello.node); n != by_node_.end() && agents_[n->second].info.alive) {
    (void)socket_->send(
        peer, encode_refused("an agent for node '" + hello.node + "' is already registered (pid " +
                             std::to_string(agents_[n->second].info.pid) + ")"));
    return;
  }
  if (hello.capacity.cores < 1) {
    (void)socket_->send(peer, encode_refused("an agent must offer at least one core"));
    return;
  }
  if (!slot.empty()) slot_nodes_[slot] = hello.node;
  Agent a;
  a.peer = peer;
  a.info.node = {hello.node, hello.capacity, address_};
  a.info.pid = hello.pid;
  a.log_dir = hello.log_dir;
  a.last_heard = Clock::now();
  agents_.push_back(std::move(a));
  std::size_t index = agents_.size() - 1;
  by_peer_[peer] = index;
  by_node_[hello.node] = index;
  all_lost_reported_ = false;
  AgentWelcome w;
  w.heartbeat_ms = millis(options_.heartbeat);
  w.silence_ms = millis(options_.agent_silence);
  w.kill_grace_ms = millis(options_.kill_grace);
  if (!send_to(index, encode_welcome(w))) {
    declare_lost(index, "it disconnected while registering");
    return;
  }
  if (!probe_targets_.empty()) (void)send_to(index, probe_targets_);
}

void AgentLauncher::declare_lost(std::size_t index, const std::string& why) {
  Agent& a = agents_[index];
  if (!a.info.alive) return;
  a.info.alive = false;
  ++losses_;
  by_peer_.erase(a.peer);
  a.batch.clear();
  const std::string message = "lost: the agent on node " + a.info.node.name + " " + why;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second != index) {
      ++it;
      continue;
    }
    StateUpdate u;
    u.task = static_cast<TaskId>(it->first >> 32);
    u.attempt = static_cast<std::uint32_t>(it->first & 0xffffffffU);
    u.kind = UpdateKind::lost;
    u.message = message;
    u.end_time = wall_seconds_now();
    pending_.push_back(std::move(u));
    if (!collect_.empty()) collect_.erase(it->first);
    it = in_flight_.erase(it);
  }
  a.info.running = 0;
  fail_fetches(index, message);
  if (frozen_ && !all_lost_reported_ && options_.on_all_lost &&
      std::none_of(agents_.begin(), agents_.end(), [](const Agent& x) { return x.info.alive; })) {
    all_lost_reported_ = true;
    options_.on_all_lost("every agent is lost (the last: node " + a.info.node.name + ", " + why +
                         ")");
  }
}

void AgentLauncher::check_liveness(TimePoint now) {
  const std::string beat = encode_empty(AgentMessage::heartbeat);
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    Agent& a = agents_[i];
    if (!a.info.alive) continue;
    if (now - a.last_heard > options_.lost_after) {
      declare_lost(i, "sent nothing for " + format_duration(now - a.last_heard) + " (timeout " +
                          format_duration(options_.lost_after) + ")");
      continue;
    }
    // A failed heartbeat (the connection is down) is not a loss yet: the agent reconnects with
    // the same identity if it lives; the timeout decides.
    if (now - a.last_sent >= options_.heartbeat) (void)send_to(i, beat);
  }
  // Sending may have consumed the edge of a message that arrived meanwhile.
  if (socket_->readable()) more_input_ = true;
}

Result<std::vector<NodeInfo>> AgentLauncher::wait_until(const std::function<bool()>& done,
                                                        Duration timeout, CancelToken* cancel,
                                                        const std::function<std::string()>& missing,
                                                        const WaitWatch& watch) {
  const TimePoint give_up = Clock::now() + timeout;
  while (true) {
    serve();
    check_liveness(Clock::now());
    if (done()) break;
    if (cancel != nullptr && cancel->requests() > 0) {
      return Status(ErrorCode::cancelled, "cancelled while waiting for agents");
    }
    if (watch) {
      if (Status s = watch(); !s.ok()) {
        return Status(s.code(), s.message() + " (agents missing: " + missing() + ")");
      }
    }
    auto now = Clock::now();
    if (now >= give_up) {
      return Status(
          ErrorCode::unavailable,
          "agents did not register within " + format_duration(timeout) + ": missing " + missing());
    }
    if (more_input_) continue;
    pollfd fds[2] = {{socket_->fd(), POLLIN, 0}, {-1, POLLIN, 0}};
    if (cancel != nullptr) fds[1].fd = cancel->fd();
    ::poll(fds, 2, 100);
  }
  frozen_ = true;
  std::vector<NodeInfo> nodes;
  for (const auto& name : expected_) nodes.push_back(agents_[by_node_.at(name)].info.node);
  return nodes;
}

Result<std::vector<NodeInfo>> AgentLauncher::wait_for_nodes(const std::vector<std::string>& nodes,
                                                            Duration timeout, CancelToken* cancel,
                                                            const WaitWatch& watch) {
  expected_ = nodes;
  frozen_ = true;  // other names are refused from the start
  auto registered = [this](const std::string& n) {
    auto it = by_node_.find(n);
    return it != by_node_.end() && agents_[it->second].info.alive;
  };
  return wait_until([&] { return std::all_of(nodes.begin(), nodes.end(), registered); }, timeout,
                    cancel,
                    [&] {
                      std::vector<std::string> m;
                      for (const auto& n : nodes) {
                        if (!registered(n)) m.push_back(n);
                      }
                      return join(m);
                    },
                    watch);
}

Result<std::vector<NodeInfo>> AgentLauncher::wait_for_count(std::size_t count, Duration timeout,
                                                            CancelToken* cancel,
                                                            const WaitWatch& watch) {
  auto live = [this] {
    std::vector<std::string> names;
    for (const auto& a : agents_) {
      if (a.info.alive) names.push_back(a.info.node.name);
    }
    return names;
  };
  auto result = wait_until(
      [&] {
        auto names = live();
        if (names.size() < count) return false;
        names.resize(count);
        expected_ = names;
        return true;
      },
      timeout, cancel,
      [&] {
        auto names = live();
        return std::to_string(count - names.size()) + " of " + std::to_string(count) +
               " agents (registered: " + (names.empty() ? "none" : join(names)) + ")";
      },
      watch);
  // Agents beyond the first `count` are not part of the run.
  if (result.ok()) {
    for (std::size_t i = 0; i < agents_.size(); ++i) {
      const std::string& n = agents_[i].info.node.name;
      if (agents_[i].info.alive &&
          std::find(expected_.begin(), expected_.end(), n) == expected_.end()) {
        (void)send_to(
            i, encode_refused("the run already has its " + std::to_string(count) + " agents"));
        agents_[i].info.alive = false;
        by_peer_.erase(agents_[i].peer);
      }
    }
  }
  return result;
}

bool AgentLauncher::node_alive(std::string_view node) const {
  auto it = by_node_.find(std::string(node));
  return it != by_node_.end() && agents_[it->second].info.alive;
}

std::vector<AgentInfo> AgentLauncher::agents() const {
  std::vector<AgentInfo> out;
  for (const auto& a : agents_) out.push_back(a.info);
  return out;
}

std::size_t AgentLauncher::refused_peers() const {
  return socket_->refused();
}

Result<LaunchHandle> AgentLauncher::launch(const LaunchRequest& request) {
  if (request.run_as != nullptr) {
    return invalid_argument("this site runs tasks as the coordinator's own user only, not as " +
                            request.run_as->name);
  }
  if (request.spec == nullptr) return invalid_argument("launch request without a task spec");
  const TaskSpec& spec = *request.spec;
  if ((spec.kind != TaskKind::executable && spec.kind != TaskKind::service) || spec.cmd.empty()) {
    return invalid_argument("task '" + spec.name +
                            "' is not an executable or service task with a command; agents run "
                            "only those");
  }
  auto it = by_node_.find(request.node);
  if (it == by_node_.end()) {
    return Status(ErrorCode::unavailable, "no agent registered for node '" + request.node + "'");
  }
  Agent& a = agents_[it->second];
  if (!a.info.alive) {
    return Status(ErrorCode::unavailable, "the agent on node " + request.node + " is lost");
  }
  LaunchHandle handle = handle_of(spec.id, request.attempt);
  if (a.batch.empty()) begin_batch(a.batch, AgentMessage::launch);
  if (a.log_dir.empty() || spec.kind == TaskKind::service ||
      (request.stdout_path.empty() && request.stderr_path.empty())) {
    append_launch(a.batch, request);
  } else {
    // Node-local output: <log_dir>/<run id>/<file name>. The run id keeps runs apart on a node.
    std::string_view run = "run";
    for (const auto& [k, v] : request.env) {
      if (k == "CHORUS_RUN_ID" && usable_folder_name(v)) run = v;
    }
    std::string node_dir = a.log_dir + "/" + std::string(run);
    auto local = [&](const std::string& p) {
      return p.empty() ? std::string() : node_dir + "/" + std::string(file_of(p));
    };
    append_launch(a.batch, request, local(request.stdout_path), local(request.stderr_path));
    collect_[handle] = {request.stdout_path, request.stderr_path};
    std::string_view shared =
        parent_of(request.stdout_path.empty() ? request.stderr_path : request.stdout_path);
    if (!shared.empty() && shared != a.noted_in) note_node_logs(a, std::string(shared), node_dir);
  }
  in_flight_[handle] = it->second;
  a.info.running += 1;
  return handle;
}

void AgentLauncher::flush() {
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    Agent& a = agents_[i];
    if (a.batch.empty()) continue;
    bool sent = a.info.alive && send_to(i, a.batch);
    a.batch.clear();
    // The batch is gone with the connection: its tasks would wait forever for updates.
    if (!sent) declare_lost(i, "was disconnected when its tasks were sent");
  }
  if (socket_->readable()) more_input_ = true;
}

void AgentLauncher::poll(std::vector<StateUpdate>& out) {
  serve();
  check_liveness(Clock::now());
  if (pending_.empty()) return;
  for (StateUpdate& u : pending_) out.push_back(std::move(u));
  pending_.clear();
}

Status AgentLauncher::cancel(LaunchHandle handle) {
  auto it = in_flight_.find(handle);
  if (it == in_flight_.end() || !agents_[it->second].info.alive) return {};
  std::string msg;
  begin_batch(msg, AgentMessage::cancel);
  append_task_ref(
      msg, {static_cast<TaskId>(handle >> 32), static_cast<std::uint32_t>(handle & 0xffffffffU)});
  if (!send_to(it->second, msg)) declare_lost(it->second, "disconnected");
  if (socket_->readable()) more_input_ = true;
  return {};
}

int AgentLauncher::wait_fd() const {
  return socket_->fd();
}

std::optional<TimePoint> AgentLauncher::next_deadline() const {
  if (more_input_) return Clock::now();
  std::optional<TimePoint> next;
  for (const auto& a : agents_) {
    if (!a.info.alive) continue;
    TimePoint t = std::min(a.last_heard + options_.lost_after, a.last_sent + options_.heartbeat);
    if (!next || t < *next) next = t;
  }
  return next;
}

}  // namespace chorus
