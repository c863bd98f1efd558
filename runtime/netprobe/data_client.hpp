// DataClient: one connection to a `chorus data-server` (data_protocol.hpp) — what the agents'
// probes and the test bed's job program (`chorus data-job`) use. Blocking calls on the caller's
// thread: run it where waiting is fine (the agent's probe thread, a job program), never on a
// loop that serves others.
//
// Timeouts are silences: a call fails (ErrorCode::unavailable) when the server sends or takes
// nothing for `timeout`, so a long transfer on a slow link is fine while a wedged one is not.
// After a failed call the connection is unusable (its stream position is unknown): connect anew.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "core/units.hpp"

namespace chorus::netprobe {

struct TransferResult {
  std::uint64_t bytes = 0;
  // From the request's first byte sent to the last payload byte received (GET) or the server's
  // OK received (PUT): it includes about one round trip, which a bandwidth estimate subtracts.
  double seconds = 0;
};

class DataClient {
 public:
  // Connects within `timeout` (errors: invalid_argument for a name that does not resolve,
  // unavailable for a refusal or a timeout, each naming HOST:PORT).
  static Result<DataClient> connect(std::string_view host, int port,
                                    Duration timeout = std::chrono::seconds(5));
  DataClient(DataClient&& other) noexcept;
  DataClient& operator=(DataClient&& other) noexcept;
  DataClient(const DataClient&) = delete;
  DataClient& operator=(const DataClient&) = delete;
  ~DataClient();

  // The TCP connect time of this connection, in seconds.
  double connect_seconds() const { return connect_seconds_; }
  void set_timeout(Duration timeout) { timeout_ = timeout; }

  // One PING/PONG round trip, in seconds.
  Result<double> ping();
  // The kernel's minimum RTT of this connection (tcp_info.hpp); NaN when it does not say.
  double tcp_min_rtt_seconds() const;
  // Fetches / sends n bytes (n <= kMaxTransfer). A server's ERR is invalid_argument with its
  // reason.
  Result<TransferResult> get(std::uint64_t n);
  Result<TransferResult> put(std::uint64_t n);
  // A measurement of the link alone: two requests back to back, `lead` bytes then `n` bytes,
  // and the result is the second's n bytes over the time between the first's end and the
  // second's (GET: their last bytes received; PUT: their OKs received). The round trip and any
  // shaper's burst (a token bucket let through at line rate) are spent in the lead.
  Result<TransferResult> get_after(std::uint64_t lead, std::uint64_t n);
  Result<TransferResult> put_after(std::uint64_t lead, std::uint64_t n);

 private:
  DataClient(int fd, std::string where, Duration timeout, double connect_seconds);
  Status send_all(const char* data, std::size_t n);
  Result<std::string> read_line();
  Status receive_payload(std::uint64_t n);
  // Sends `data`, noting in `*seen_at` when a line arrives meanwhile (put_after's first OK,
  // kept in in_).
  Status send_watching(const char* data, std::size_t n, double* seen_at);
  Status wait(short events);
  Status fail(ErrorCode code, const std::string& what);

  int fd_ = -1;
  std::string where_;  // "HOST:PORT", for messages
  Duration timeout_;
  double connect_seconds_ = 0;
  std::string in_;  // bytes received past the last line read
};

// The TCP connect time to HOST:PORT in seconds (SourceProbe::connect), the connection closed at
// once. Errors as DataClient::connect.
Result<double> tcp_connect_seconds(std::string_view host, int port,
                                   Duration timeout = std::chrono::seconds(5));

}  // namespace chorus::netprobe
