#include "runtime/transport/local_socket.hpp"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstdlib>

namespace chorus {
namespace {

Status zmq_failure(const std::string& what) {
  const int err = zmq_errno();
  return {err == EADDRINUSE ? ErrorCode::unavailable : ErrorCode::io_error,
          what + ": " + zmq_strerror(err)};
}

// ":uid:gid:pid" at the end of libzmq's Peer-Address of an ipc connection.
bool parse_credentials(const char* address, PeerCredentials& who) {
  if (address == nullptr) return false;
  std::string_view text(address);
  std::size_t c3 = text.rfind(':');
  if (c3 == std::string_view::npos || c3 == 0) return false;
  std::size_t c2 = text.rfind(':', c3 - 1);
  if (c2 == std::string_view::npos || c2 == 0) return false;
  std::size_t c1 = text.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) return false;
  std::string uid(text.substr(c1 + 1, c2 - c1 - 1)), gid(text.substr(c2 + 1, c3 - c2 - 1)),
      pid(text.substr(c3 + 1));
  if (uid.empty() || gid.empty() || pid.empty()) return false;
  char* end = nullptr;
  who.uid = static_cast<std::uint32_t>(std::strtoul(uid.c_str(), &end, 10));
  if (*end != '\0') return false;
  who.gid = static_cast<std::uint32_t>(std::strtoul(gid.c_str(), &end, 10));
  if (*end != '\0') return false;
  who.pid = std::strtoll(pid.c_str(), &end, 10);
  return *end == '\0';
}

int frame(void* socket, std::string& into, bool& more, PeerCredentials* who, bool& known) {
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (zmq_msg_recv(&msg, socket, ZMQ_DONTWAIT) < 0) {
    const int err = zmq_errno();
    zmq_msg_close(&msg);
    return err == EAGAIN ? 0 : -1;
  }
  into.assign(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
  more = zmq_msg_more(&msg) != 0;
  if (who != nullptr) known = parse_credentials(zmq_msg_gets(&msg, "Peer-Address"), *who);
  zmq_msg_close(&msg);
  return 1;
}

}  // namespace

Result<std::unique_ptr<LocalServerSocket>> LocalServerSocket::bind(const std::string& path,
                                                                   mode_t mode,
                                                                   std::int64_t max_message) {
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return invalid_argument("the socket path " + path + " is longer than a Unix socket allows (" +
                            std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                            " bytes); use a shorter state folder");
  }
  std::unique_ptr<LocalServerSocket> s(new LocalServerSocket());
  s->context_ = zmq_ctx_new();
  if (s->context_ == nullptr) return zmq_failure("cannot create a ZeroMQ context");
  s->socket_ = zmq_socket(s->context_, ZMQ_ROUTER);
  if (s->socket_ == nullptr) return zmq_failure("cannot create the server socket");
  int zero = 0;
  zmq_setsockopt(s->socket_, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s->socket_, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message);
  // A live server answers on the path: refuse to take it over. A file nobody answers on is a
  // killed server's: replaced.
  {
    auto probe = LocalClientSocket::connect(path);
    if (probe.ok() && (*probe)->request("{\"op\":\"ping\"}", 300).ok()) {
      return Status(ErrorCode::unavailable, "a server already answers on " + path);
    }
  }
  ::unlink(path.c_str());
  const mode_t old = ::umask(0777 & ~mode);
  const int rc = zmq_bind(s->socket_, ("ipc://" + path).c_str());
  ::umask(old);
  if (rc != 0) return zmq_failure("cannot listen on " + path);
  ::chmod(path.c_str(), mode);
  s->path_ = path;
  std::size_t size = sizeof s->fd_;
  if (zmq_getsockopt(s->socket_, ZMQ_FD, &s->fd_, &size) != 0) {
    return zmq_failure("cannot read the socket's fd");
  }
  return s;
}

LocalServerSocket::~LocalServerSocket() {
  if (socket_ != nullptr) zmq_close(socket_);
  if (context_ != nullptr) zmq_ctx_term(context_);
  if (!path_.empty()) ::unlink(path_.c_str());
}

Result<bool> LocalServerSocket::receive(std::string& peer, std::string& payload,
                                        PeerCredentials& who) {
  while (true) {
    bool more = false, known = false;
    int rc = frame(socket_, peer, more, nullptr, known);
    if (rc == 0) return false;
    if (rc < 0) return zmq_failure("cannot receive");
    if (!more) continue;  // no payload: ignore
    rc = frame(socket_, payload, more, &who, known);
    if (rc != 1) return zmq_failure("cannot receive");
    std::string rest;
    bool ignored = false;
    while (more && frame(socket_, rest, more, nullptr, ignored) == 1) {
    }
    if (known) return true;
  }
}

Status LocalServerSocket::send(std::string_view peer, std::string_view payload) {
  if (zmq_send(socket_, peer.data(), peer.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    if (zmq_errno() == EHOSTUNREACH) return not_found("the client is gone");
    return zmq_failure("cannot send");
  }
  if (zmq_send(socket_, payload.data(), payload.size(), ZMQ_DONTWAIT) < 0) {
    return zmq_failure("cannot send");
  }
  return {};
}

bool LocalServerSocket::readable() const {
  int events = 0;
  std::size_t size = sizeof events;
  if (zmq_getsockopt(socket_, ZMQ_EVENTS, &events, &size) != 0) return false;
  return (events & ZMQ_POLLIN) != 0;
}

Result<std::unique_ptr<LocalClientSocket>> LocalClientSocket::connect(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    return not_found("no server socket at " + path);
  }
  std::unique_ptr<LocalClientSocket> c(new LocalClientSocket());
  c->context_ = zmq_ctx_new();
  if (c->context_ == nullptr) return zmq_failure("cannot create a ZeroMQ context");
  c->socket_ = zmq_socket(c->context_, ZMQ_DEALER);
  if (c->socket_ == nullptr) return zmq_failure("cannot create the client socket");
  int zero = 0;
  zmq_setsockopt(c->socket_, ZMQ_LINGER, &zero, sizeof zero);
  int immediate = 1;  // a message waits for a connection, not in a queue nobody reads
  zmq_setsockopt(c->socket_, ZMQ_IMMEDIATE, &immediate, sizeof immediate);
  if (zmq_connect(c->socket_, ("ipc://" + path).c_str()) != 0) {
    return zmq_failure("cannot connect to " + path);
  }
  return c;
}

LocalClientSocket::~LocalClientSocket() {
  if (socket_ != nullptr) zmq_close(socket_);
  if (context_ != nullptr) zmq_ctx_term(context_);
}

Result<std::string> LocalClientSocket::request(std::string_view request, int timeout_ms) {
  zmq_pollitem_t out{socket_, 0, ZMQ_POLLOUT, 0};
  if (zmq_poll(&out, 1, timeout_ms) <= 0) {
    return Status(ErrorCode::unavailable, "the server does not accept connections");
  }
  // DEALER -> ROUTER: the server reads [peer][payload].
  if (zmq_send(socket_, request.data(), request.size(), ZMQ_DONTWAIT) < 0) {
    return zmq_failure("cannot send the request");
  }
  zmq_pollitem_t in{socket_, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&in, 1, timeout_ms) <= 0) {
    return Status(ErrorCode::unavailable,
                  "no reply from the server within " + std::to_string(timeout_ms / 1000) + " s");
  }
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (zmq_msg_recv(&msg, socket_, 0) < 0) {
    zmq_msg_close(&msg);
    return zmq_failure("cannot receive the reply");
  }
  std::string reply(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
  zmq_msg_close(&msg);
  return reply;
}

}  // namespace chorus
