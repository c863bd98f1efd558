#include "runtime/transport/message_socket.hpp"

#include <zmq.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

#include "core/thread_guard.hpp"

namespace chorus {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr int kZapPollMs = 100;  // how often the ZAP thread checks whether to stop

std::string zmq_words() {
  return zmq_strerror(zmq_errno());
}

Status zmq_status(const std::string& what) {
  int err = zmq_errno();
  ErrorCode code = err == EADDRINUSE        ? ErrorCode::unavailable
                   : err == EINVAL          ? ErrorCode::invalid_argument
                   : err == EPROTONOSUPPORT ? ErrorCode::invalid_argument
                                            : ErrorCode::io_error;
  return {code, what + ": " + zmq_words()};
}

int set_int(void* socket, int option, int value) {
  return zmq_setsockopt(socket, option, &value, sizeof value);
}

int socket_fd(void* socket) {
  int fd = -1;
  std::size_t size = sizeof fd;
  if (zmq_getsockopt(socket, ZMQ_FD, &fd, &size) != 0) return -1;
  return fd;
}

bool socket_readable(void* socket) {
  int events = 0;
  std::size_t size = sizeof events;
  if (zmq_getsockopt(socket, ZMQ_EVENTS, &events, &size) != 0) return false;
  return (events & ZMQ_POLLIN) != 0;
}

// One frame into `into`; `more` tells whether frames follow; `user` (if given) gets the ZAP user
// id of the connection it came through. Returns 1 on a frame, 0 when none is waiting, -1 on an
// error.
int receive_frame(void* socket, std::string& into, bool& more, std::string* user = nullptr,
                  std::string* address = nullptr) {
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  int n = zmq_msg_recv(&msg, socket, ZMQ_DONTWAIT);
  if (n < 0) {
    int err = zmq_errno();
    zmq_msg_close(&msg);
    return err == EAGAIN ? 0 : -1;
  }
  into.assign(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
  more = zmq_msg_more(&msg) != 0;
  if (user != nullptr) {
    const char* id = zmq_msg_gets(&msg, "User-Id");
    user->assign(id != nullptr ? id : "");
  }
  if (address != nullptr) {
    const char* from = zmq_msg_gets(&msg, "Peer-Address");
    address->assign(from != nullptr ? from : "");
  }
  zmq_msg_close(&msg);
  return 1;
}

void skip_rest(void* socket, bool more) {
  std::string scratch;
  while (more && receive_frame(socket, scratch, more) == 1) {
  }
}

Status apply_curve_keys(void* socket, int key_option, const std::string& z85, const char* which) {
  if (!valid_curve_key(z85)) {
    return invalid_argument(std::string(which) + " is not a CURVE key (40 Z85 characters)");
  }
  if (zmq_setsockopt(socket, key_option, z85.c_str(), z85.size()) != 0) {
    return zmq_status(std::string("cannot set the ") + which);
  }
  return {};
}

void close_socket(void*& socket) {
  if (socket == nullptr) return;
  set_int(socket, ZMQ_LINGER, 0);
  zmq_close(socket);
  socket = nullptr;
}

}  // namespace

namespace {

// Raw 32-byte keys and their user ids. Errors: invalid_argument for a key that is not a CURVE key
// or a peer without a user id.
Result<std::vector<std::pair<std::string, std::string>>> decode_peers(
    const std::vector<AllowedPeer>& peers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const AllowedPeer& peer : peers) {
    std::uint8_t raw[32];
    if (!valid_curve_key(peer.public_key) ||
        zmq_z85_decode(raw, peer.public_key.c_str()) == nullptr) {
      return invalid_argument("an allowed peer key is not a CURVE key (40 Z85 characters)");
    }
    if (peer.user_id.empty()) return invalid_argument("an allowed peer needs a user id");
    out.emplace_back(std::string(reinterpret_cast<const char*>(raw), sizeof raw), peer.user_id);
  }
  return out;
}

}  // namespace

Status ServerSocket::set_allowed_peers(const std::vector<AllowedPeer>& peers) {
  auto decoded = decode_peers(peers);
  if (!decoded.ok()) return decoded.status();
  std::lock_guard lock(allowed_mutex_);
  allowed_ = std::move(*decoded);
  return {};
}

Result<std::unique_ptr<ServerSocket>> ServerSocket::bind(const ServerSocketOptions& options) {
  std::unique_ptr<ServerSocket> s(new ServerSocket());
  auto decoded = decode_peers(options.allowed_peers);
  if (!decoded.ok()) return decoded.status();
  s->allowed_ = std::move(*decoded);
  s->context_ = zmq_ctx_new();
  if (s->context_ == nullptr) return zmq_status("cannot create a ZeroMQ context");

  // The ZAP handler must be bound before the server socket sees its first handshake.
  void* zap = zmq_socket(s->context_, ZMQ_REP);
  if (zap == nullptr) return zmq_status("cannot create the ZAP socket");
  if (zmq_bind(zap, kZapEndpoint) != 0) {
    Status st = zmq_status("cannot bind the ZAP handler");
    close_socket(zap);
    return st;
  }
  ServerSocket* self = s.get();
  s->zap_thread_ =
      std::thread([self, zap] { run_guarded("ZAP handler", [self, zap] { self->run_zap(zap); }); });

  s->socket_ = zmq_socket(s->context_, ZMQ_ROUTER);
  if (s->socket_ == nullptr) return zmq_status("cannot create the server socket");
  set_int(s->socket_, ZMQ_LINGER, 0);
  set_int(s->socket_, ZMQ_ROUTER_MANDATORY, 1);  // a send to a gone peer fails instead of vanishing
  set_int(s->socket_, ZMQ_ROUTER_HANDOVER, 1);   // a reconnecting agent takes over its identity
  set_int(s->socket_, ZMQ_SNDHWM, 0);            // batches are bounded by the coordinator instead
  set_int(s->socket_, ZMQ_RCVHWM, 0);
  set_int(s->socket_, ZMQ_CURVE_SERVER, 1);
  if (options.max_message > 0) {
    zmq_setsockopt(s->socket_, ZMQ_MAXMSGSIZE, &options.max_message, sizeof options.max_message);
  }
  if (Status st = apply_curve_keys(s->socket_, ZMQ_CURVE_SECRETKEY, options.keys.secret_key,
                                   "server secret key");
      !st.ok()) {
    return st;
  }
  const char domain[] = "chorus";
  zmq_setsockopt(s->socket_, ZMQ_ZAP_DOMAIN, domain, sizeof domain - 1);
  if (zmq_bind(s->socket_, options.endpoint.c_str()) != 0) {
    return zmq_status("cannot listen on " + options.endpoint);
  }
  char last[256] = {};
  std::size_t size = sizeof last;
  if (zmq_getsockopt(s->socket_, ZMQ_LAST_ENDPOINT, last, &size) == 0) s->endpoint_ = last;
  s->fd_ = socket_fd(s->socket_);
  if (s->fd_ < 0) return zmq_status("cannot get the server socket's descriptor");
  return s;
}

ServerSocket::~ServerSocket() {
  if (socket_ != nullptr) {
    // Long enough for a last shutdown message to reach connected agents, bounded if they're gone.
    set_int(socket_, ZMQ_LINGER, 500);
    zmq_close(socket_);
    socket_ = nullptr;
  }
  stop_.store(true);
  if (zap_thread_.joinable()) zap_thread_.join();
  if (context_ != nullptr) zmq_ctx_term(context_);
}

// RFC 27: request = version, request id, domain, address, identity, mechanism, credentials...;
// reply = version, request id, status code, status text, user id, metadata.
void ServerSocket::run_zap(void* zap) {
  while (!stop_.load()) {
    zmq_pollitem_t item{zap, 0, ZMQ_POLLIN, 0};
    int n = zmq_poll(&item, 1, kZapPollMs);
    if (n <= 0) continue;
    std::vector<std::string> frames;
    bool more = true;
    while (more) {
      std::string frame;
      if (receive_frame(zap, frame, more) != 1) break;
      frames.push_back(std::move(frame));
    }
    if (frames.size() < 6) continue;  // malformed: libzmq never sends these
    std::optional<std::string> user;
    if (frames[5] == "CURVE" && frames.size() >= 7) {
      std::lock_guard lock(allowed_mutex_);
      for (const auto& [key, id] : allowed_) {
        if (frames[6] == key) user = id;
      }
    }
    const bool ok = user.has_value();
    if (!ok) refused_.fetch_add(1, std::memory_order_relaxed);
    const std::string reply[] = {"1.0",
                                 frames[1],
                                 ok ? "200" : "400",
                                 ok ? "OK" : "public key not allowed for this run",
                                 ok ? *user : "",
                                 ""};
    for (std::size_t i = 0; i < 6; ++i) {
      zmq_send(zap, reply[i].data(), reply[i].size(), i + 1 < 6 ? ZMQ_SNDMORE : 0);
    }
  }
  close_socket(zap);
}

Status ServerSocket::bind_more(const std::string& endpoint) {
  if (zmq_bind(socket_, endpoint.c_str()) != 0) return zmq_status("cannot listen on " + endpoint);
  return {};
}

Result<bool> ServerSocket::receive(std::string& peer, std::string& payload, std::string* user,
                                   std::string* address) {
  bool more = false;
  int rc = receive_frame(socket_, peer, more);
  if (rc == 0) return false;
  if (rc < 0) return zmq_status("cannot receive");
  if (!more) return receive(peer, payload, user, address);  // no payload frame: ignore
  rc = receive_frame(socket_, payload, more, user, address);
  if (rc != 1) return zmq_status("cannot receive");
  skip_rest(socket_, more);
  return true;
}

Status ServerSocket::send(std::string_view peer, std::string_view payload) {
  if (zmq_send(socket_, peer.data(), peer.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    if (zmq_errno() == EHOSTUNREACH) return not_found("the agent is not connected");
    return zmq_status("cannot send");
  }
  if (zmq_send(socket_, payload.data(), payload.size(), ZMQ_DONTWAIT) < 0) {
    return zmq_status("cannot send");
  }
  return {};
}

bool ServerSocket::readable() const {
  return socket_readable(socket_);
}

Result<std::unique_ptr<ClientSocket>> ClientSocket::connect(const std::string& endpoint,
                                                            const std::string& server_public_key,
                                                            const CurveKeyPair& keys) {
  std::unique_ptr<ClientSocket> c(new ClientSocket());
  c->context_ = zmq_ctx_new();
  if (c->context_ == nullptr) return zmq_status("cannot create a ZeroMQ context");
  c->socket_ = zmq_socket(c->context_, ZMQ_DEALER);
  if (c->socket_ == nullptr) return zmq_status("cannot create the client socket");
  set_int(c->socket_, ZMQ_LINGER, 0);
  // A fixed identity for this socket's life: after a reconnect (a network blip) the server still
  // knows who we are. The first byte must not be 0 (ZeroMQ reserves those identities).
  std::random_device random;
  std::string identity(16, '\0');
  for (char& ch : identity) ch = static_cast<char>(random() & 0xff);
  identity[0] = static_cast<char>(1 + (static_cast<unsigned char>(identity[0]) % 255));
  zmq_setsockopt(c->socket_, ZMQ_ROUTING_ID, identity.data(), identity.size());
  set_int(c->socket_, ZMQ_SNDHWM, 0);
  set_int(c->socket_, ZMQ_RCVHWM, 0);
  if (Status s = apply_curve_keys(c->socket_, ZMQ_CURVE_SERVERKEY, server_public_key,
                                  "coordinator's public key");
      !s.ok()) {
    return s;
  }
  if (Status s =
          apply_curve_keys(c->socket_, ZMQ_CURVE_PUBLICKEY, keys.public_key, "agent public key");
      !s.ok()) {
    return s;
  }
  if (Status s =
          apply_curve_keys(c->socket_, ZMQ_CURVE_SECRETKEY, keys.secret_key, "agent secret key");
      !s.ok()) {
    return s;
  }
  // Authentication failures are only visible through the socket monitor.
  std::string monitor =
      "inproc://monitor-" + std::to_string(reinterpret_cast<std::uintptr_t>(c.get()));
  const int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                     ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  if (zmq_socket_monitor(c->socket_, monitor.c_str(), events) == 0) {
    c->monitor_ = zmq_socket(c->context_, ZMQ_PAIR);
    if (c->monitor_ != nullptr && zmq_connect(c->monitor_, monitor.c_str()) != 0) {
      close_socket(c->monitor_);
    }
  }
  if (zmq_connect(c->socket_, endpoint.c_str()) != 0) {
    return zmq_status("cannot connect to " + endpoint);
  }
  c->fd_ = socket_fd(c->socket_);
  if (c->fd_ < 0) return zmq_status("cannot get the client socket's descriptor");
  return c;
}

void ClientSocket::linger_on_close(int ms) {
  set_int(socket_, ZMQ_LINGER, ms);
}

ClientSocket::~ClientSocket() {
  if (socket_ != nullptr) zmq_socket_monitor(socket_, nullptr, 0);
  close_socket(monitor_);
  close_socket(socket_);
  if (context_ != nullptr) zmq_ctx_term(context_);
}

Result<bool> ClientSocket::receive(std::string& payload) {
  bool more = false;
  int rc = receive_frame(socket_, payload, more);
  if (rc == 0) return false;
  if (rc < 0) return zmq_status("cannot receive");
  skip_rest(socket_, more);
  return true;
}

Status ClientSocket::send(std::string_view payload) {
  if (zmq_send(socket_, payload.data(), payload.size(), ZMQ_DONTWAIT) < 0) {
    if (zmq_errno() == EAGAIN) return Status(ErrorCode::unavailable, "send queue full");
    return zmq_status("cannot send");
  }
  return {};
}

bool ClientSocket::readable() const {
  return socket_readable(socket_);
}

void ClientSocket::read_monitor() {
  if (monitor_ == nullptr) return;
  std::string frame;
  bool more = false;
  while (receive_frame(monitor_, frame, more) == 1) {
    // First frame: 16-bit event id, 32-bit value; second: the endpoint.
    if (frame.size() >= 2) {
      std::uint16_t event = 0;
      std::memcpy(&event, frame.data(), sizeof event);
      switch (event) {
        case ZMQ_EVENT_CONNECTED:
          handshaking_ = true;
          break;
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
          handshaking_ = false;
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
          refused_ = true;
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
          ++failed_handshakes_;
          handshaking_ = false;
          break;
        case ZMQ_EVENT_DISCONNECTED:
          // Dropped before the handshake finished: the server could not read our hello.
          if (handshaking_) ++failed_handshakes_;
          handshaking_ = false;
          break;
        default:
          break;
      }
    }
    skip_rest(monitor_, more);
  }
}

bool ClientSocket::authentication_refused() {
  read_monitor();
  return refused_;
}

int ClientSocket::failed_handshakes() {
  read_monitor();
  return failed_handshakes_;
}

}  // namespace chorus
