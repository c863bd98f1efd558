#include "runtime/agent/agent_launcher.hpp"

#include <poll.h>

#include <algorithm>
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

}  // namespace

AgentLauncher::AgentLauncher(AgentLauncherOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<AgentLauncher>> AgentLauncher::start(AgentLauncherOptions options) {
  if (options.key_dir.empty()) return invalid_argument("the agent launcher needs a key folder");
  auto server = generate_curve_keypair();
  if (!server.ok()) return server.status();
  auto client = generate_curve_keypair();
  if (!client.ok()) return client.status();
  std::unique_ptr<AgentLauncher> l(new AgentLauncher(std::move(options)));
  if (Status s = write_agent_keys(l->options_.key_dir, {server->public_key, *client}); !s.ok()) {
    return s;
  }
  ServerSocketOptions so;
  so.endpoint = l->options_.listen;
  so.keys = *server;
  so.allowed_peers = {client->public_key};
  auto socket = ServerSocket::bind(so);
  if (!socket.ok()) return socket.status();
  l->socket_ = std::move(*socket);
  l->endpoint_ = l->socket_->endpoint();
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
    auto got = socket_->receive(peer_, payload_);
    if (!got.ok() || !*got) break;
    on_message(peer_, payload_);
  }
  more_input_ = false;
}

void AgentLauncher::on_message(const std::string& peer, const std::string& payload) {
  MessageHeader h = message_type(payload);
  if (!h.ok) {
    (void)socket_->send(peer,
                        encode_refused("agent protocol version " + std::to_string(h.version) +
                                       " is not version " + std::to_string(kAgentProtocolVersion) +
                                       ": use the same chorus binary on both sides"));
    return;
  }
  if (h.type == AgentMessage::hello) {
    on_hello(peer, payload);
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
  if (h.type != AgentMessage::updates) return;  // heartbeats: last_heard is enough
  decoded_.clear();
  if (!decode_updates(payload, decoded_)) return;
  for (StateUpdate& u : decoded_) {
    auto f = in_flight_.find(handle_of(u.task, u.attempt));
    if (f == in_flight_.end() || f->second != it->second) continue;  // stale or not its task
    in_flight_.erase(f);
    a.info.running -= 1;
    pending_.push_back(std::move(u));
  }
}

void AgentLauncher::on_hello(const std::string& peer, const std::string& payload) {
  AgentHello hello;
  if (!decode_hello(payload, hello) || hello.node.empty()) {
    (void)socket_->send(peer, encode_refused("malformed registration"));
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
  Agent a;
  a.peer = peer;
  a.info.node = {hello.node, hello.capacity};
  a.info.pid = hello.pid;
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
  if (!send_to(index, encode_welcome(w))) declare_lost(index, "it disconnected while registering");
}

void AgentLauncher::declare_lost(std::size_t index, const std::string& why) {
  Agent& a = agents_[index];
  if (!a.info.alive) return;
  a.info.alive = false;
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
    it = in_flight_.erase(it);
  }
  a.info.running = 0;
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
                                                            CancelToken* cancel) {
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
      {});
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
  append_launch(a.batch, request);
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
