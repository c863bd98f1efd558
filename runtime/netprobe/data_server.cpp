#include "runtime/netprobe/data_server.hpp"

#include <fcntl.h>
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
#include <cstdlib>
#include <cstring>

#include "runtime/netprobe/data_protocol.hpp"
#include "runtime/netprobe/socket_util.hpp"

namespace chorus::netprobe {
namespace {

constexpr std::size_t kChunk = 64 * 1024;

// The bytes a GET sends: a repeating pattern (data_protocol.hpp: not meaningful).
const std::array<char, kChunk>& pattern() {
  static const std::array<char, kChunk> bytes = [] {
    std::array<char, kChunk> b{};
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>('a' + i % 26);
    return b;
  }();
  return bytes;
}

// A decimal size: digits only, at most kMaxTransfer.
bool parse_size(std::string_view text, std::uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && out <= kMaxTransfer;
}

}  // namespace

struct DataServer::Connection {
  enum class Mode { line, put, get };
  int fd = -1;
  Mode mode = Mode::line;
  std::string line;     // the request line so far (without its newline)
  std::string pending;  // bytes read but not yet handled (behind a GET in progress)
  std::string out;      // reply text not yet written
  std::size_t out_off = 0;
  std::uint64_t size = 0;       // the current GET/PUT's n
  std::uint64_t remaining = 0;  // GET: bytes still to send; PUT: bytes still to read
  bool closing = false;         // after ERR: write `out`, shut the write side, discard input
  bool shut = false;            // closing, and the write side is shut
  std::chrono::steady_clock::time_point progress;
  std::chrono::steady_clock::time_point linger_until;  // closing: dropped then at the latest

  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
  // Input left behind a finished GET counts as work to write: its answers are due (and a
  // writable socket makes poll return for it).
  bool wants_write() const {
    return out_off < out.size() || (!closing && (mode == Mode::get || !pending.empty()));
  }
  bool wants_read() const { return closing ? shut : !wants_write(); }
};

Result<std::unique_ptr<DataServer>> DataServer::listen(std::string_view host_port,
                                                       DataServerOptions options) {
  auto hp = parse_host_port(host_port);
  if (!hp.ok()) return hp.status();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(hp->port);
  const char* host = hp->host.empty() ? nullptr : hp->host.c_str();
  if (int rc = ::getaddrinfo(host, port.c_str(), &hints, &found); rc != 0) {
    return invalid_argument("data server: cannot resolve '" + hp->host +
                            "': " + ::gai_strerror(rc));
  }
  int err = 0;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    return io_error("data server: cannot listen on " + std::string(host_port) + ": " +
                    errno_text(err));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char name[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, name, sizeof name, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    err = errno;
    ::close(fd);
    return io_error("data server: cannot read the bound address: " + errno_text(err));
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    err = errno;
    ::close(fd);
    return io_error("data server: pipe: " + errno_text(err));
  }
  return std::unique_ptr<DataServer>(
      new DataServer(fd, pipe_fds[0], pipe_fds[1], name, std::atoi(serv), options));
}

DataServer::DataServer(int listen_fd, int wake_read, int wake_write, std::string host, int port,
                       DataServerOptions options)
    : listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      host_(std::move(host)),
      port_(port),
      options_(options) {}

DataServer::~DataServer() {
  conns_.clear();
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void DataServer::stop() {
  const char b = 1;
  [[maybe_unused]] auto n = ::write(wake_write_, &b, 1);
}

DataServerStats DataServer::stats() const {
  return {connections_.load(), requests_.load(),       errors_.load(),
          bytes_sent_.load(),  bytes_received_.load(), dropped_.load()};
}

Status DataServer::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : conns_) {
      short events = 0;
      if (c->wants_write()) events |= POLLOUT;
      if (c->wants_read()) events |= POLLIN;
      fds.push_back({c->fd, events, 0});
    }
    if (::poll(fds.data(), fds.size(), 1000) < 0) {
      if (errno == EINTR) continue;
      return io_error("data server: poll: " + errno_text(errno));
    }
    if (fds[0].revents != 0) {
      char buf[64];
      while (::read(wake_read_, buf, sizeof buf) > 0) {
      }
      return {};
    }
    const auto now = std::chrono::steady_clock::now();
    // Connections first (indices match fds[2..]); accepted ones join the next turn.
    std::size_t keep = 0;
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      Connection& c = *conns_[i];
      bool alive = true;
      if (c.shut && now > c.linger_until) {
        alive = false;
      } else if (fds[i + 2].revents != 0) {
        alive = service(c, fds[i + 2].revents);
        if (alive) c.progress = now;
      } else if (now - c.progress > options_.idle_timeout) {
        alive = false;
        dropped_.fetch_add(1, std::memory_order_relaxed);
      }
      if (alive) conns_[keep++] = std::move(conns_[i]);
    }
    conns_.resize(keep);
    if (fds[1].revents != 0) accept_all();
  }
}

void DataServer::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or an error the next turn sees again (EMFILE: retried later)
    connections_.fetch_add(1, std::memory_order_relaxed);
    if (conns_.size() >= options_.max_connections) {
      ::close(fd);
      dropped_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // Answers are small writes after small writes (OK after OK): Nagle's algorithm would hold
    // one back until the client's delayed ACK, some 40 ms, and falsify every timing.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->line.reserve(kMaxLine);
    c->progress = std::chrono::steady_clock::now();
    conns_.push_back(std::move(c));
  }
}

bool DataServer::service(Connection& c, short revents) {
  if ((revents & (POLLERR | POLLNVAL)) != 0) return false;
  static thread_local std::array<char, kChunk> buf;
  if (c.closing) {
    if (!flush(c)) return false;
    if (c.out_off < c.out.size()) return true;
    if (!c.shut) {
      // Shut our side and read what the client still sends until it closes: closing with
      // unread input would reset the connection and could lose the ERR line before it is read.
      ::shutdown(c.fd, SHUT_WR);
      c.shut = true;
      c.linger_until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      return true;
    }
    if ((revents & (POLLIN | POLLHUP)) == 0) return true;
    const ssize_t n = ::recv(c.fd, buf.data(), buf.size(), 0);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
  }
  if ((revents & (POLLIN | POLLHUP)) != 0 && c.wants_read()) {
    const ssize_t n = ::recv(c.fd, buf.data(), buf.size(), 0);
    if (n == 0) return false;  // the peer closed (mid-transfer or not)
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    if (n > 0 && !handle_input(c, buf.data(), static_cast<std::size_t>(n))) return false;
  }
  // Write what is due, then handle input left behind a GET that has finished; each
  // handle_input either consumes its bytes or leaves them behind a new GET (wants_write).
  for (int round = 0; round < 4 && !c.closing; ++round) {
    if (!flush(c)) return false;
    if (c.out_off < c.out.size() || c.mode == Connection::Mode::get || c.pending.empty()) break;
    std::string left = std::move(c.pending);
    c.pending.clear();
    if (!handle_input(c, left.data(), left.size())) return false;
  }
  if (c.closing) return service(c, 0);
  return true;
}

bool DataServer::handle_input(Connection& c, const char* data, std::size_t n) {
  while (n > 0) {
    if (c.closing) return true;  // nothing after an ERR is read
    if (c.mode == Connection::Mode::get) {
      c.pending.assign(data, n);  // the next request waits for this GET's bytes
      return true;
    }
    if (c.mode == Connection::Mode::put) {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(c.remaining, n));
      c.remaining -= take;
      bytes_received_.fetch_add(take, std::memory_order_relaxed);
      data += take;
      n -= take;
      if (c.remaining == 0) {
        c.out += "OK " + std::to_string(c.size) + "\n";
        c.mode = Connection::Mode::line;
        requests_.fetch_add(1, std::memory_order_relaxed);
      }
      continue;
    }
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', n));
    const std::size_t take = nl == nullptr ? n : static_cast<std::size_t>(nl - data);
    // kMaxLine counts the newline.
    if (c.line.size() + take + 1 > kMaxLine) {
      c.line.clear();
      errors_.fetch_add(1, std::memory_order_relaxed);
      c.out += "ERR request line longer than " + std::to_string(kMaxLine) + " bytes\n";
      c.closing = true;
      return true;
    }
    c.line.append(data, take);
    if (nl == nullptr) return true;
    data += take + 1;
    n -= take + 1;
    std::string line = std::move(c.line);
    c.line.clear();
    if (!handle_line(c, line)) return false;
  }
  return true;
}

bool DataServer::handle_line(Connection& c, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto fail = [&](const std::string& why) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    c.out += "ERR " + why + "\n";
    c.closing = true;
    return true;
  };
  if (line == "PING") {
    c.out += "PONG\n";
    requests_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const bool get = line.starts_with("GET ");
  const bool put = line.starts_with("PUT ");
  if (!get && !put) return fail("unknown request (expected PING, GET <n> or PUT <n>)");
  std::uint64_t n = 0;
  if (!parse_size(line.substr(4), n)) {
    return fail("bad size: a decimal byte count from 0 to " + std::to_string(kMaxTransfer) +
                " expected");
  }
  c.size = n;
  c.remaining = n;
  if (get) {
    c.out += "OK " + std::to_string(n) + "\n";
    c.mode = n > 0 ? Connection::Mode::get : Connection::Mode::line;
    requests_.fetch_add(1, std::memory_order_relaxed);
  } else if (n == 0) {
    c.out += "OK 0\n";
    requests_.fetch_add(1, std::memory_order_relaxed);
  } else {
    c.mode = Connection::Mode::put;
  }
  return true;
}

bool DataServer::flush(Connection& c) {
  while (c.out_off < c.out.size()) {
    const ssize_t n =
        ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.out_off += static_cast<std::size_t>(n);
  }
  c.out.clear();
  c.out_off = 0;
  if (c.closing) return true;
  // A GET's payload, after its OK line; a few chunks per turn so one fast reader cannot starve
  // the other connections.
  for (int i = 0; i < 16 && c.mode == Connection::Mode::get; ++i) {
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(c.remaining, kChunk));
    const ssize_t n = ::send(c.fd, pattern().data(), len, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.remaining -= static_cast<std::uint64_t>(n);
    bytes_sent_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    if (c.remaining == 0) c.mode = Connection::Mode::line;
  }
  return true;
}

}  // namespace chorus::netprobe
