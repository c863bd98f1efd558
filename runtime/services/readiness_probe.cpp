#include "runtime/services/readiness_probe.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

namespace chorus {
namespace {

// How long one connection attempt (and the HTTP answer on it) may take before it is abandoned
// and a new one is started at the next interval.
constexpr auto kAttemptLimit = std::chrono::seconds(2);

std::string errno_text(int err) {
  return std::strerror(err);
}

}  // namespace

ReadinessProbe::ReadinessProbe(const ReadyProbe& spec, ProbeTarget target)
    : spec_(spec), target_(std::move(target)) {
  if (spec_.kind == ProbeKind::stdout_regex) {
    if (auto p = LinePattern::compile(spec_.regex)) {
      pattern_.emplace(std::move(p).value());
    } else {
      last_error_ = "the ready pattern does not compile: " + p.status().message();
    }
  }
}

ReadinessProbe::~ReadinessProbe() {
  close_socket();
}

std::optional<std::string> ReadinessProbe::check(TimePoint now) {
  next_check_ = now + spec_.interval;
  if (target_.reported) return check_reported();
  switch (spec_.kind) {
    case ProbeKind::tcp:
    case ProbeKind::http:
      return check_socket(now);
    case ProbeKind::stdout_regex:
      return check_stdout();
    case ProbeKind::file:
      return check_file();
  }
  return std::nullopt;
}

void ReadinessProbe::close_socket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connected_ = false;
  request_sent_ = false;
  response_.clear();
}

bool ReadinessProbe::start_connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target_.port);
  // Resolution of a node name is a local lookup (/etc/hosts, nscd) on the clusters we target.
  if (int rc = getaddrinfo(target_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    last_error_ = "cannot resolve " + target_.host + ": " + gai_strerror(rc);
    return false;
  }
  int err = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd_ < 0) {
      err = errno;
      continue;
    }
    if (::connect(fd_, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) break;
    err = errno;
    ::close(fd_);
    fd_ = -1;
  }
  freeaddrinfo(found);
  if (fd_ < 0) {
    last_error_ = "connecting to " + target_.host + ":" + port + ": " + errno_text(err);
    return false;
  }
  return true;
}

std::optional<std::string> ReadinessProbe::check_socket(TimePoint now) {
  const std::string where = target_.host + ":" + std::to_string(target_.port);
  if (fd_ >= 0 && now - connect_started_ > kAttemptLimit) {
    last_error_ = "connecting to " + where + ": no answer within 2 s";
    close_socket();
  }
  if (fd_ < 0) {
    if (!start_connect()) return std::nullopt;
    connect_started_ = now;
  }
  if (!connected_) {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 0) <= 0) return std::nullopt;  // still connecting
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      last_error_ = "connecting to " + where + ": " + errno_text(err);
      close_socket();
      return std::nullopt;
    }
    // A connect to a local port nobody listens on can pick that very port as its source and
    // connect to itself (TCP simultaneous open); it then holds the port the service wants.
    sockaddr_storage self{}, peer{};
    socklen_t self_len = sizeof self, peer_len = sizeof peer;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&self), &self_len) == 0 &&
        getpeername(fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0 &&
        self_len == peer_len && std::memcmp(&self, &peer, self_len) == 0) {
      last_error_ = "connecting to " + where + ": " + errno_text(ECONNREFUSED);
      close_socket();
      return std::nullopt;
    }
    connected_ = true;
  }
  if (spec_.kind == ProbeKind::tcp) {
    close_socket();
    return where;
  }
  if (!request_sent_) {
    const std::string path = spec_.path.empty() ? "/" : spec_.path;
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + where +
                                "\r\nUser-Agent: chorus-probe\r\nConnection: close\r\n\r\n";
    // A request this small fits any socket buffer: one send, or the attempt is retried.
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      last_error_ = "sending the HTTP request to " + where + ": " + errno_text(errno);
      close_socket();
      return std::nullopt;
    }
    request_sent_ = true;
  }
  char buf[512];
  while (true) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      response_.append(buf, static_cast<std::size_t>(n));
      if (response_.find("\r\n") != std::string::npos || response_.size() > 4096) break;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return std::nullopt;
    if (n < 0) {
      last_error_ = "reading the HTTP answer of " + where + ": " + errno_text(errno);
      close_socket();
      return std::nullopt;
    }
    break;  // closed by the server
  }
  // "HTTP/1.1 204 No Content"
  std::string status_line = response_.substr(0, response_.find("\r\n"));
  close_socket();
  auto space = status_line.find(' ');
  if (status_line.rfind("HTTP/", 0) != 0 || space == std::string::npos ||
      status_line.size() < space + 4) {
    last_error_ = "GET http://" + where + spec_.path + " did not answer HTTP";
    return std::nullopt;
  }
  if (status_line[space + 1] == '2') return "http://" + where;
  last_error_ = "GET http://" + where + spec_.path + " answered " + status_line.substr(space + 1);
  return std::nullopt;
}

std::optional<std::string> ReadinessProbe::check_stdout() {
  if (!pattern_) return std::nullopt;
  std::ifstream in(target_.stdout_path, std::ios::binary);
  if (!in) {
    last_error_ = "it printed nothing yet (no line matched '" + spec_.regex + "')";
    return std::nullopt;
  }
  in.seekg(static_cast<std::streamoff>(stdout_offset_));
  // Read in blocks, not the whole new output at once: memory stays bounded by one block plus
  // the kept start of one line, however much the service printed since the last check.
  constexpr std::size_t kBlock = 64 * 1024;
  std::string block(kBlock, '\0');
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    stdout_offset_ += got;
    std::string_view rest(block.data(), got);
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const std::string_view piece = rest.substr(0, nl);
      if (!skipping_long_line_) {
        const std::size_t room = kMaxLineBytes - partial_line_.size();
        partial_line_.append(piece.substr(0, room));
        if (piece.size() > room) skipping_long_line_ = true;
      }
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
      // A line ended: match what was kept of it.
      auto found = pattern_->search(partial_line_);
      partial_line_.clear();
      skipping_long_line_ = false;
      if (found) return found;
    }
  }
  last_error_ = "no line of its stdout matched '" + spec_.regex + "'";
  return std::nullopt;
}

std::optional<std::string> ReadinessProbe::check_file() {
  std::string path = spec_.path;
  if (!path.empty() && path[0] != '/' && !target_.workdir.empty()) {
    path = target_.workdir + "/" + path;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    last_error_ = path + " does not exist";
    return std::nullopt;
  }
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  while (!first.empty() && (first.back() == '\r' || first.back() == ' ')) first.pop_back();
  return first.empty() ? path : first;
}

std::optional<std::string> ReadinessProbe::check_reported() {
  std::optional<ReplicaReadiness> r = target_.reported();
  if (!r) {
    last_error_ = "its launcher has lost track of it";
    return std::nullopt;
  }
  if (!r->ready || r->address.empty()) {
    last_error_ =
        r->detail.empty() ? std::string("its launcher does not report it ready yet") : r->detail;
    return std::nullopt;
  }
  const std::string host =
      r->address.find(':') != std::string::npos ? "[" + r->address + "]" : r->address;
  const std::string where = host + ":" + std::to_string(target_.port);
  switch (spec_.kind) {
    case ProbeKind::tcp:
      return where;
    case ProbeKind::http:
      return "http://" + where;
    case ProbeKind::stdout_regex:
      return check_stdout();
    case ProbeKind::file:
      // The site saw the file; its first line is the endpoint where the coordinator sees the
      // same working directory (Kubernetes: the hostPath), else the path itself.
      if (auto first = check_file()) return first;
      return spec_.path;
  }
  return std::nullopt;
}

}  // namespace chorus
