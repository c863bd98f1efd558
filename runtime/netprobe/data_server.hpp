// DataServer: the far end of a link for probes and the test bed's jobs — `chorus data-server`.
// Speaks data_protocol.hpp (PING / GET n / PUT n) to many connections at once from one thread
// with poll(2); it stores nothing and measures nothing beyond byte counters (what the probe
// budget test reads).
//
// Hostile input: a request line longer than kMaxLine, an unknown verb, a size that is not a
// decimal number or exceeds kMaxTransfer get `ERR <reason>` and the connection is closed after
// it. A client that stops mid-transfer (vanishes, or just stalls) holds only its own connection:
// it is dropped after `idle_timeout` without progress, and no other connection waits for it.
// Past `max_connections`, new connections are accepted and closed at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace chorus::netprobe {

struct DataServerOptions {
  std::chrono::milliseconds idle_timeout{60'000};
  std::size_t max_connections = 1024;
};

// Counters since start; read from any thread.
struct DataServerStats {
  std::uint64_t connections = 0;     // accepted
  std::uint64_t requests = 0;        // well-formed requests answered
  std::uint64_t errors = 0;          // ERR answers
  std::uint64_t bytes_sent = 0;      // GET payload bytes written
  std::uint64_t bytes_received = 0;  // PUT payload bytes read
  std::uint64_t dropped = 0;         // connections closed for idling or over the limit
};

class DataServer {
 public:
  // Binds and listens on HOST:PORT (port 0 = an ephemeral one: port() says which). Errors:
  // invalid_argument for a bad address, io_error for the OS's refusal (address in use, ...).
  static Result<std::unique_ptr<DataServer>> listen(std::string_view host_port,
                                                    DataServerOptions options = {});
  ~DataServer();
  DataServer(const DataServer&) = delete;
  DataServer& operator=(const DataServer&) = delete;

  // The bound address, numeric ("127.0.0.1", "::").
  const std::string& host() const { return host_; }
  int port() const { return port_; }

  // Serves until stop(); returns ok then, or the error that stopped it (poll failing). Call from
  // one thread only.
  Status run();
  // Makes run() return soon. Thread-safe and async-signal-safe (one write(2) to a pipe).
  void stop();

  DataServerStats stats() const;

 private:
  struct Connection;
  DataServer(int listen_fd, int wake_read, int wake_write, std::string host, int port,
             DataServerOptions options);
  void accept_all();
  // Reads, writes and parses what `c` is ready for; false = close it.
  bool service(Connection& c, short revents);
  bool handle_input(Connection& c, const char* data, std::size_t n);
  bool handle_line(Connection& c, std::string_view line);
  bool flush(Connection& c);

  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;
  std::string host_;
  int port_ = 0;
  DataServerOptions options_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::atomic<std::uint64_t> connections_{0}, requests_{0}, errors_{0}, bytes_sent_{0},
      bytes_received_{0}, dropped_{0};
};

}  // namespace chorus::netprobe
