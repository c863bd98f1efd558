// ReadinessProbe: tells, without blocking, whether one service replica is ready
// (core/service_spec's ReadyProbe: a TCP port accepting connections, an HTTP path answering 2xx, a
// line of its stdout matching a regex, a file appearing).
//
// check() never blocks: a TCP connect or an HTTP exchange in progress is kept open and advanced by
// the next call. Call it at most every ReadyProbe::interval (next_check() says when).
#pragma once

#include <optional>
#include <regex>
#include <string>

#include "core/service_spec.hpp"
#include "core/units.hpp"

namespace chorus {

struct ProbeTarget {
  std::string host;         // where tcp/http connect (a name or an address)
  int port = 0;             // tcp/http: the replica's port (ReadyProbe::port + replica)
  std::string stdout_path;  // stdout_regex: the replica's stdout file (may not exist yet)
  std::string workdir;      // file: relative paths resolve here
};

class ReadinessProbe {
 public:
  // The regex must compile (the workflow reader checks it); if it does not, every check fails
  // with std::regex's words.
  ReadinessProbe(const ReadyProbe& spec, ProbeTarget target);
  ~ReadinessProbe();
  ReadinessProbe(const ReadinessProbe&) = delete;
  ReadinessProbe& operator=(const ReadinessProbe&) = delete;

  // The endpoint once ready ("host:port", "http://host:port", the regex's capture, the file's
  // first line); nullopt while not ready. last_error() says why not, for the message a user sees
  // when the start-up timeout passes.
  std::optional<std::string> check(TimePoint now);
  const std::string& last_error() const { return last_error_; }
  TimePoint next_check() const { return next_check_; }

 private:
  std::optional<std::string> check_socket(TimePoint now);
  std::optional<std::string> check_stdout();
  std::optional<std::string> check_file();
  bool start_connect();
  void close_socket();

  ReadyProbe spec_;
  ProbeTarget target_;
  std::optional<std::regex> regex_;
  int fd_ = -1;
  bool connected_ = false;
  bool request_sent_ = false;
  std::string response_;
  TimePoint connect_started_{};
  TimePoint next_check_{};
  std::size_t stdout_offset_ = 0;
  std::string partial_line_;
  std::string last_error_ = "not checked yet";
};

}  // namespace chorus
