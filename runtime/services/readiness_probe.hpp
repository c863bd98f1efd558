// ReadinessProbe: tells, without blocking, whether one service replica is ready
// (core/service_spec's ReadyProbe: a TCP port accepting connections, an HTTP path answering 2xx, a
// line of its stdout matching a pattern (core/line_pattern: RE2 syntax), a file appearing).
//
// check() never blocks: a TCP connect or an HTTP exchange in progress is kept open and advanced by
// the next call. Call it at most every ReadyProbe::interval (next_check() says when).
//
// When the replica's launcher checks readiness itself (ProbeTarget::reported set: Kubernetes, whose
// kubelet runs the probe as a readinessProbe), check() asks it instead of connecting, and turns
// its answer into the same endpoint forms at the address it reports.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "adapters/launcher.hpp"
#include "core/line_pattern.hpp"
#include "core/service_spec.hpp"
#include "core/units.hpp"

namespace chorus {

// What a launcher reports of one replica (Launcher::readiness bound to its handle).
using ReadinessReport = std::function<std::optional<ReplicaReadiness>()>;

struct ProbeTarget {
  std::string host;         // where tcp/http connect (a name or an address)
  int port = 0;             // tcp/http: the replica's port (ReadyProbe::port + replica)
  std::string stdout_path;  // stdout_regex: the replica's stdout file (may not exist yet)
  std::string workdir;      // file: relative paths resolve here
  // Set when the launcher checks readiness itself (Launcher::readiness); `host` is then unused.
  ReadinessReport reported;
};

class ReadinessProbe {
 public:
  // A stdout probe matches only the first kMaxLineBytes of a line; the rest of a longer line is
  // skipped unread into memory, so a service printing megabytes without a newline costs at most
  // this much (plus one read block) and never stops the probe from seeing the lines after it.
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;

  // The pattern must compile (the workflow reader checks it); if it does not, every check fails
  // and last_error() says why.
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
  // How much of an unfinished stdout line is held: at most kMaxLineBytes.
  std::size_t kept_bytes() const { return partial_line_.size(); }

 private:
  std::optional<std::string> check_socket(TimePoint now);
  std::optional<std::string> check_stdout();
  std::optional<std::string> check_file();
  std::optional<std::string> check_reported();
  bool start_connect();
  void close_socket();

  ReadyProbe spec_;
  ProbeTarget target_;
  std::optional<LinePattern> pattern_;
  int fd_ = -1;
  bool connected_ = false;
  bool request_sent_ = false;
  std::string response_;
  TimePoint connect_started_{};
  TimePoint next_check_{};
  std::size_t stdout_offset_ = 0;
  std::string partial_line_;         // the start of the line not ended yet, at most kMaxLineBytes
  bool skipping_long_line_ = false;  // past kMaxLineBytes of the current line: drop to its end
  std::string last_error_ = "not checked yet";
};

}  // namespace chorus
