// Local message sockets: a ZeroMQ ROUTER on a Unix socket (ipc://PATH) that knows who each peer
// is, and the DEALER a client talks to it with. What `chorus serve` listens on for the users of
// its own machine.
//
// Identity: no keys. The kernel's SO_PEERCRED of the connection (the uid, gid and pid of the
// process that connected) comes with every message: libzmq reads it when the connection is
// accepted and offers it as the message's "Peer-Address" property (":uid:gid:pid"). A peer
// cannot forge it. Who may connect at all is the socket file's mode.
//
// Frames larger than `max_message` bytes are refused by libzmq, which drops that connection;
// the server goes on with its other peers.
//
// Readiness: as message_socket.hpp (fd() is ZMQ_FD, edge-triggered: receive until false).
// Threading: one thread per object.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace chorus {

struct PeerCredentials {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::int64_t pid = 0;
};

class LocalServerSocket {
 public:
  // Binds ipc://`path` (a stale socket file there is replaced) and sets its mode. Errors:
  // invalid_argument (a path too long for a Unix socket: 107 bytes), unavailable (another
  // server answers there), io_error.
  static Result<std::unique_ptr<LocalServerSocket>> bind(const std::string& path, mode_t mode,
                                                         std::int64_t max_message);
  ~LocalServerSocket();
  LocalServerSocket(const LocalServerSocket&) = delete;
  LocalServerSocket& operator=(const LocalServerSocket&) = delete;

  // One message without blocking; false when none waits. A message whose peer's credentials are
  // unknown is dropped (never attributed to anyone). Errors: io_error.
  Result<bool> receive(std::string& peer, std::string& payload, PeerCredentials& who);
  // Errors: not_found (the peer is gone), io_error.
  Status send(std::string_view peer, std::string_view payload);
  int fd() const { return fd_; }
  bool readable() const;

 private:
  LocalServerSocket() = default;
  void* context_ = nullptr;
  void* socket_ = nullptr;
  int fd_ = -1;
  std::string path_;
};

// A request/reply client: one outstanding request at a time.
class LocalClientSocket {
 public:
  // Errors: not_found (no socket file at `path`), io_error.
  static Result<std::unique_ptr<LocalClientSocket>> connect(const std::string& path);
  ~LocalClientSocket();
  LocalClientSocket(const LocalClientSocket&) = delete;
  LocalClientSocket& operator=(const LocalClientSocket&) = delete;

  // Sends `request` and waits up to `timeout_ms` for the reply. Errors: unavailable (no reply in
  // time: the server is down or busy), io_error.
  Result<std::string> request(std::string_view request, int timeout_ms);

 private:
  LocalClientSocket() = default;
  void* context_ = nullptr;
  void* socket_ = nullptr;
};

}  // namespace chorus
