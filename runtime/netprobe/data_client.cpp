#include "runtime/netprobe/data_client.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "runtime/netprobe/data_protocol.hpp"
#include "runtime/netprobe/socket_util.hpp"
#include "runtime/netprobe/tcp_info.hpp"

namespace chorus::netprobe {
namespace {

constexpr std::size_t kChunk = 64 * 1024;

int timeout_ms(Duration d) {
  return static_cast<int>(std::clamp<std::int64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(d).count(), 1, 24 * 3600 * 1000));
}

struct Connected {
  int fd = -1;
  double seconds = 0;
};

// A non-blocking connect to the first address that answers within `timeout`.
Result<Connected> open_connection(std::string_view host, int port, Duration timeout) {
  const std::string where = std::string(host) + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string host_text(host);
  const std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(host_text.c_str(), port_text.c_str(), &hints, &found); rc != 0) {
    return invalid_argument("data server " + where + ": cannot resolve '" + host_text +
                            "': " + ::gai_strerror(rc));
  }
  std::string last = "no address";
  Connected out;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = errno_text(errno);
      continue;
    }
    const double t0 = steady_seconds();
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        const int rc = ::poll(&p, 1, timeout_ms(timeout));
        socklen_t len = sizeof err;
        if (rc == 0) {
          err = ETIMEDOUT;
        } else if (rc < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
          err = errno;
        }
      }
    }
    if (err == 0) {
      out.fd = fd;
      out.seconds = steady_seconds() - t0;
      break;
    }
    last = errno_text(err);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (out.fd < 0) {
    return Status(ErrorCode::unavailable, "data server " + where + ": cannot connect: " + last);
  }
  const int one = 1;
  ::setsockopt(out.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return out;
}

}  // namespace

Result<DataClient> DataClient::connect(std::string_view host, int port, Duration timeout) {
  auto c = open_connection(host, port, timeout);
  if (!c.ok()) return c.status();
  return DataClient(c->fd, std::string(host) + ":" + std::to_string(port), timeout, c->seconds);
}

Result<double> tcp_connect_seconds(std::string_view host, int port, Duration timeout) {
  auto c = open_connection(host, port, timeout);
  if (!c.ok()) return c.status();
  ::close(c->fd);
  return c->seconds;
}

DataClient::DataClient(int fd, std::string where, Duration timeout, double connect_seconds)
    : fd_(fd), where_(std::move(where)), timeout_(timeout), connect_seconds_(connect_seconds) {}

DataClient::DataClient(DataClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      where_(std::move(other.where_)),
      timeout_(other.timeout_),
      connect_seconds_(other.connect_seconds_),
      in_(std::move(other.in_)) {}

DataClient& DataClient::operator=(DataClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    where_ = std::move(other.where_);
    timeout_ = other.timeout_;
    connect_seconds_ = other.connect_seconds_;
    in_ = std::move(other.in_);
  }
  return *this;
}

DataClient::~DataClient() {
  if (fd_ >= 0) ::close(fd_);
}

Status DataClient::fail(ErrorCode code, const std::string& what) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return {code, "data server " + where_ + ": " + what};
}

Status DataClient::wait(short events) {
  pollfd p{fd_, events, 0};
  for (;;) {
    const int rc = ::poll(&p, 1, timeout_ms(timeout_));
    if (rc > 0) return {};
    if (rc == 0) {
      return fail(ErrorCode::unavailable,
                  "silent for " + format_duration(timeout_) + " (timed out)");
    }
    if (errno != EINTR) return fail(ErrorCode::io_error, "poll: " + errno_text(errno));
  }
}

Status DataClient::send_all(const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t k = ::send(fd_, data, n, MSG_NOSIGNAL);
    if (k > 0) {
      data += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (auto s = wait(POLLOUT); !s.ok()) return s;
      continue;
    }
    return fail(ErrorCode::unavailable, "send: " + errno_text(errno));
  }
  return {};
}

Result<std::string> DataClient::read_line() {
  std::array<char, 512> buf;
  for (;;) {
    if (const auto nl = in_.find('\n'); nl != std::string::npos) {
      std::string line = in_.substr(0, nl);
      in_.erase(0, nl + 1);
      return line;
    }
    if (in_.size() >= kMaxLine) return fail(ErrorCode::io_error, "answer line too long");
    const ssize_t k = ::recv(fd_, buf.data(), buf.size(), 0);
    if (k > 0) {
      in_.append(buf.data(), static_cast<std::size_t>(k));
      continue;
    }
    if (k == 0) return fail(ErrorCode::unavailable, "closed the connection");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (auto s = wait(POLLIN); !s.ok()) return s;
      continue;
    }
    return fail(ErrorCode::unavailable, "recv: " + errno_text(errno));
  }
}

namespace {

// "OK <n>" for the n asked; the server's "ERR ..." otherwise.
Status check_ok(const std::string& line, std::uint64_t n) {
  if (line.starts_with("ERR ")) return invalid_argument(line.substr(4));
  if (line != "OK " + std::to_string(n)) {
    return Status(ErrorCode::io_error, "unexpected answer '" + line.substr(0, 40) + "'");
  }
  return {};
}

}  // namespace

double DataClient::tcp_min_rtt_seconds() const {
  return netprobe::tcp_min_rtt_seconds(fd_);
}

Result<double> DataClient::ping() {
  if (fd_ < 0) return fail(ErrorCode::unavailable, "connection closed after an earlier error");
  const double t0 = steady_seconds();
  if (auto s = send_all("PING\n", 5); !s.ok()) return s;
  auto line = read_line();
  if (!line.ok()) return line.status();
  if (*line != "PONG") {
    auto s = check_ok(*line, 0);
    return fail(s.ok() ? ErrorCode::io_error : s.code(),
                s.ok() ? "unexpected answer to PING" : s.message());
  }
  return steady_seconds() - t0;
}

Result<TransferResult> DataClient::get(std::uint64_t n) {
  if (fd_ < 0) return fail(ErrorCode::unavailable, "connection closed after an earlier error");
  const double t0 = steady_seconds();
  const std::string req = "GET " + std::to_string(n) + "\n";
  if (auto s = send_all(req.data(), req.size()); !s.ok()) return s;
  auto line = read_line();
  if (!line.ok()) return line.status();
  if (auto s = check_ok(*line, n); !s.ok()) return fail(s.code(), s.message());
  if (auto s = receive_payload(n); !s.ok()) return s;
  return TransferResult{n, steady_seconds() - t0};
}

Status DataClient::receive_payload(std::uint64_t n) {
  std::uint64_t left = n;
  const auto buffered = std::min<std::uint64_t>(left, in_.size());
  in_.erase(0, static_cast<std::size_t>(buffered));
  left -= buffered;
  std::array<char, kChunk> buf;
  while (left > 0) {
    const ssize_t k = ::recv(fd_, buf.data(), std::min<std::uint64_t>(left, buf.size()), 0);
    if (k > 0) {
      left -= static_cast<std::uint64_t>(k);
      continue;
    }
    if (k == 0) {
      return fail(ErrorCode::unavailable, "closed the connection with " + std::to_string(left) +
                                              " of " + std::to_string(n) + " bytes to come");
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (auto s = wait(POLLIN); !s.ok()) return s;
      continue;
    }
    return fail(ErrorCode::unavailable, "recv: " + errno_text(errno));
  }
  return {};
}

Result<TransferResult> DataClient::get_after(std::uint64_t lead, std::uint64_t n) {
  if (fd_ < 0) return fail(ErrorCode::unavailable, "connection closed after an earlier error");
  const std::string req = "GET " + std::to_string(lead) + "\nGET " + std::to_string(n) + "\n";
  if (auto s = send_all(req.data(), req.size()); !s.ok()) return s;
  auto first = read_line();
  if (!first.ok()) return first.status();
  if (auto s = check_ok(*first, lead); !s.ok()) return fail(s.code(), s.message());
  if (auto s = receive_payload(lead); !s.ok()) return s;
  const double t1 = steady_seconds();
  auto second = read_line();
  if (!second.ok()) return second.status();
  if (auto s = check_ok(*second, n); !s.ok()) return fail(s.code(), s.message());
  if (auto s = receive_payload(n); !s.ok()) return s;
  return TransferResult{n, steady_seconds() - t1};
}

Status DataClient::send_watching(const char* data, std::size_t n, double* seen_at) {
  std::array<char, 512> buf;
  while (n > 0) {
    pollfd p{fd_, static_cast<short>(POLLOUT | (*seen_at == 0 ? POLLIN : 0)), 0};
    const int rc = ::poll(&p, 1, timeout_ms(timeout_));
    if (rc == 0) return fail(ErrorCode::unavailable, "silent for " + format_duration(timeout_));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::io_error, "poll: " + errno_text(errno));
    }
    if ((p.revents & POLLIN) != 0) {
      const ssize_t k = ::recv(fd_, buf.data(), buf.size(), 0);
      if (k == 0) return fail(ErrorCode::unavailable, "closed the connection");
      if (k > 0) {
        in_.append(buf.data(), static_cast<std::size_t>(k));
        if (in_.find('\n') != std::string::npos) *seen_at = steady_seconds();
        if (in_.size() > kMaxLine) return fail(ErrorCode::io_error, "answer line too long");
      }
    }
    if ((p.revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const ssize_t k = ::send(fd_, data, n, MSG_NOSIGNAL);
      if (k > 0) {
        data += k;
        n -= static_cast<std::size_t>(k);
      } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return fail(ErrorCode::unavailable, "send: " + errno_text(errno));
      }
    }
  }
  return {};
}

Result<TransferResult> DataClient::put_after(std::uint64_t lead, std::uint64_t n) {
  if (fd_ < 0) return fail(ErrorCode::unavailable, "connection closed after an earlier error");
  if (lead > kMaxTransfer || n > kMaxTransfer) {
    return invalid_argument("PUT of more than " + std::to_string(kMaxTransfer) + " bytes");
  }
  static const std::array<char, kChunk> zeros{};
  double t1 = 0;
  for (std::uint64_t part : {lead, n}) {
    const std::string req = "PUT " + std::to_string(part) + "\n";
    if (auto s = send_watching(req.data(), req.size(), &t1); !s.ok()) return s;
    for (std::uint64_t left = part; left > 0;) {
      const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
      if (auto s = send_watching(zeros.data(), len, &t1); !s.ok()) return s;
      left -= len;
    }
  }
  auto first = read_line();
  if (!first.ok()) return first.status();
  if (t1 == 0) t1 = steady_seconds();  // it came after everything was written
  if (auto s = check_ok(*first, lead); !s.ok()) return fail(s.code(), s.message());
  auto second = read_line();
  if (!second.ok()) return second.status();
  if (auto s = check_ok(*second, n); !s.ok()) return fail(s.code(), s.message());
  return TransferResult{n, steady_seconds() - t1};
}

Result<TransferResult> DataClient::put(std::uint64_t n) {
  if (fd_ < 0) return fail(ErrorCode::unavailable, "connection closed after an earlier error");
  if (n > kMaxTransfer) {
    return invalid_argument("PUT of " + std::to_string(n) + " bytes: at most " +
                            std::to_string(kMaxTransfer));
  }
  const double t0 = steady_seconds();
  const std::string req = "PUT " + std::to_string(n) + "\n";
  if (auto s = send_all(req.data(), req.size()); !s.ok()) return s;
  static const std::array<char, kChunk> zeros{};
  for (std::uint64_t left = n; left > 0;) {
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
    if (auto s = send_all(zeros.data(), len); !s.ok()) return s;
    left -= len;
  }
  auto line = read_line();
  if (!line.ok()) return line.status();
  if (auto s = check_ok(*line, n); !s.ok()) return fail(s.code(), s.message());
  return TransferResult{n, steady_seconds() - t0};
}

}  // namespace chorus::netprobe
