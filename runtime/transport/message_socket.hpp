// Message sockets over ZeroMQ, CURVE-encrypted: the coordinator's ROUTER (ServerSocket) and an
// agent's DEALER (ClientSocket). The only code in Chorus that includes zmq.h.
//
// Security: a ServerSocket is a CURVE server and runs a ZAP handler (RFC 27) that admits only
// clients whose public key is in its allowed list; every other peer is refused during the
// handshake, before any of its messages reach the application. Each allowed key carries a user
// id that receive() returns with every message of that peer, so the application knows WHICH key
// sent it (an agent's key is bound to its node). There is no unencrypted mode.
//
// Readiness: fd() is ZeroMQ's ZMQ_FD, which is edge-triggered: it signals that the socket's state
// MAY have changed. After it fires, call receive() until it returns false (that also re-reads
// ZMQ_EVENTS, re-arming the fd). A send can consume the signal of a message that arrived
// meanwhile: check readable() after sending before waiting on fd() again.
//
// Threading: one thread per socket object (the ZAP handler's thread is internal).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "runtime/transport/curve_keys.hpp"

namespace chorus {

struct AllowedPeer {
  std::string public_key;  // Z85
  std::string user_id;     // what receive() reports for this key's messages; not empty
};

struct ServerSocketOptions {
  // tcp://IP:PORT; PORT may be * (any free port: see ServerSocket::endpoint()). Never a wildcard
  // address chosen by us: the caller names the interface.
  std::string endpoint;
  CurveKeyPair keys;                       // the server's pair
  std::vector<AllowedPeer> allowed_peers;  // admitted clients
  // Frames larger than this are refused by libzmq, which drops that connection; -1 = no limit.
  std::int64_t max_message = -1;
};

class ServerSocket {
 public:
  // Errors: invalid_argument (a malformed key or endpoint), unavailable (address in use),
  // io_error (anything else libzmq refused), with libzmq's words.
  static Result<std::unique_ptr<ServerSocket>> bind(const ServerSocketOptions& options);
  ~ServerSocket();
  ServerSocket(const ServerSocket&) = delete;
  ServerSocket& operator=(const ServerSocket&) = delete;

  // The endpoint actually bound (the port resolved): what agents connect to.
  const std::string& endpoint() const { return endpoint_; }

  // Binds one more endpoint on the same socket, same keys and ZAP (e.g. ipc://PATH for local
  // clients): its messages arrive through the same receive() and fd(). Errors: as bind().
  Status bind_more(const std::string& endpoint);

  // Takes one message without blocking: false when none is waiting. `peer` identifies the sender
  // for send(); `user` (if given) is the user id of the key it authenticated with; `address` (if
  // given) the sender's IP address as the connection shows it ("" over ipc). Errors: io_error.
  Result<bool> receive(std::string& peer, std::string& payload, std::string* user = nullptr,
                       std::string* address = nullptr);
  // Queues one message to a connected peer without blocking. Errors: not_found when the peer is
  // not connected (gone, or never was), io_error otherwise.
  Status send(std::string_view peer, std::string_view payload);

  int fd() const { return fd_; }
  bool readable() const;
  // How many handshakes the ZAP handler refused so far (thread-safe).
  std::size_t refused() const { return refused_.load(std::memory_order_relaxed); }
  // Replaces the admitted clients (a changed key list, without a restart). It applies to
  // handshakes from now on: a connection made with a key no longer listed stays until it closes.
  // Thread-safe. Errors: as bind() for a malformed key (the list is then unchanged).
  Status set_allowed_peers(const std::vector<AllowedPeer>& peers);

 private:
  ServerSocket() = default;
  void run_zap(void* zap_socket);

  void* context_ = nullptr;
  void* socket_ = nullptr;
  int fd_ = -1;
  std::string endpoint_;
  // Raw 32-byte keys and their user ids: read by the ZAP thread, replaced by set_allowed_peers.
  std::mutex allowed_mutex_;
  std::vector<std::pair<std::string, std::string>> allowed_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> refused_{0};
  std::thread zap_thread_;
};

class ClientSocket {
 public:
  // Connects in the background (ZeroMQ reconnects by itself); messages queue until then.
  // `endpoint` is tcp://HOST:PORT or ipc://PATH. Errors: invalid_argument (a malformed key or
  // endpoint), io_error.
  static Result<std::unique_ptr<ClientSocket>> connect(const std::string& endpoint,
                                                       const std::string& server_public_key,
                                                       const CurveKeyPair& keys);
  ~ClientSocket();
  ClientSocket(const ClientSocket&) = delete;
  ClientSocket& operator=(const ClientSocket&) = delete;

  Result<bool> receive(std::string& payload);
  // Errors: unavailable when the outgoing queue is full, io_error otherwise.
  Status send(std::string_view payload);
  // Lets what is still queued out go for up to `ms` when the socket closes (a last message before
  // exit); by default nothing queued outlives the socket.
  void linger_on_close(int ms);

  int fd() const { return fd_; }
  bool readable() const;
  // Whether the server refused our keys during a handshake (CURVE/ZAP authentication failed).
  // Reads the socket monitor's events without blocking.
  bool authentication_refused();
  // Handshakes that failed for another reason, or connections the server dropped before the
  // handshake completed: what a wrong server key looks like from the client.
  int failed_handshakes();

 private:
  ClientSocket() = default;
  void read_monitor();
  void* context_ = nullptr;
  void* socket_ = nullptr;
  void* monitor_ = nullptr;
  int fd_ = -1;
  bool refused_ = false;
  bool handshaking_ = false;
  int failed_handshakes_ = 0;
};

}  // namespace chorus
