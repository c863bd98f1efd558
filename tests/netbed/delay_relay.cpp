// delay_relay: a TCP relay that adds a fixed one-way latency to both directions, for the test
// bed's "far" stores (netem is compiled out of this kernel, so latency is made in user space).
//
//   delay_relay --listen HOST:PORT --to HOST:PORT --delay-ms D [--max-buffer BYTES] [--print]
//
// Each accepted connection gets its own connection to --to. Every chunk read from one side is
// held until D ms after it was read, then written to the other side; end of stream is forwarded
// (shutdown of the write half) D ms after it was seen, so a request/answer exchange through the
// relay takes 2·D more. The reader keeps reading while earlier chunks wait, so throughput is not
// cut by the delay (up to --max-buffer held bytes per direction, default 64 MiB; beyond that the
// reader waits, which is TCP's own back-pressure). The relay's own TCP handshake is immediate:
// a connect-time RTT probe does not see D, an application round trip (PING/PONG) does.
// --print: write "listening HOST:PORT" on stdout once bound (PORT 0: the kernel's choice).
// Runs until SIGTERM/SIGINT.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}

struct Endpoint {
  std::string host;
  int port = -1;
};

bool parse_endpoint(const std::string& text, Endpoint& out) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535) return false;
  out.host = text.substr(0, colon);
  out.port = static_cast<int>(port);
  sockaddr_in a{};
  return inet_pton(AF_INET, out.host.c_str(), &a.sin_addr) == 1;
}

sockaddr_in to_addr(const Endpoint& e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(e.port));
  inet_pton(AF_INET, e.host.c_str(), &a.sin_addr);
  return a;
}

// One direction of one connection: chunks with the time they may leave.
struct Pipe {
  struct Chunk {
    Clock::time_point due;
    std::vector<char> bytes;  // empty = end of stream
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Chunk> queue;
  std::size_t held = 0;
  bool broken = false;  // the writer failed: the reader stops
};

struct Options {
  std::chrono::milliseconds delay{0};
  std::size_t max_buffer = 64u << 20;
};

void read_side(int from, Pipe& pipe, const Options& opt) {
  constexpr std::size_t kChunk = 64 * 1024;
  for (;;) {
    std::vector<char> buf(kChunk);
    ssize_t n = ::recv(from, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    std::unique_lock lock(pipe.mu);
    if (n <= 0) {
      pipe.queue.push_back({Clock::now() + opt.delay, {}});
      pipe.cv.notify_all();
      return;
    }
    buf.resize(static_cast<std::size_t>(n));
    pipe.cv.wait(lock, [&] { return pipe.broken || pipe.held < opt.max_buffer; });
    if (pipe.broken) return;
    pipe.held += buf.size();
    pipe.queue.push_back({Clock::now() + opt.delay, std::move(buf)});
    pipe.cv.notify_all();
  }
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void write_side(int to, int from, Pipe& pipe) {
  for (;;) {
    Pipe::Chunk chunk;
    {
      std::unique_lock lock(pipe.mu);
      pipe.cv.wait(lock, [&] { return !pipe.queue.empty(); });
      auto due = pipe.queue.front().due;
      while (Clock::now() < due) pipe.cv.wait_until(lock, due);
      chunk = std::move(pipe.queue.front());
      pipe.queue.pop_front();
      pipe.held -= chunk.bytes.size();
      pipe.cv.notify_all();
    }
    if (chunk.bytes.empty()) {
      ::shutdown(to, SHUT_WR);
      return;
    }
    if (!write_all(to, chunk.bytes.data(), chunk.bytes.size())) {
      std::lock_guard lock(pipe.mu);
      pipe.broken = true;
      pipe.cv.notify_all();
      ::shutdown(from, SHUT_RD);  // wakes the reader blocked in recv
      return;
    }
  }
}

void serve(int client, Endpoint target, Options opt) {
  int server = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = to_addr(target);
  if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::fprintf(stderr, "delay_relay: cannot connect to %s:%d: %s\n", target.host.c_str(),
                 target.port, std::strerror(errno));
    if (server >= 0) ::close(server);
    ::close(client);
    return;
  }
  int one = 1;
  ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Pipe up, down;  // up: client -> server, down: server -> client
  std::thread r1([&] { read_side(client, up, opt); });
  std::thread w1([&] { write_side(server, client, up); });
  std::thread r2([&] { read_side(server, down, opt); });
  std::thread w2([&] { write_side(client, server, down); });
  r1.join();
  w1.join();
  r2.join();
  w2.join();
  ::close(client);
  ::close(server);
}

int usage(const char* why) {
  std::fprintf(stderr,
               "delay_relay: %s\nusage: delay_relay --listen HOST:PORT --to HOST:PORT --delay-ms D "
               "[--max-buffer BYTES] [--print]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Endpoint listen_at, target;
  Options opt;
  bool print = false, have_delay = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--listen" || arg == "--to") {
      const char* v = value();
      Endpoint& e = arg == "--listen" ? listen_at : target;
      if (!v || !parse_endpoint(v, e)) return usage((arg + " needs IPv4:PORT").c_str());
    } else if (arg == "--delay-ms") {
      const char* v = value();
      char* end = nullptr;
      long d = v ? std::strtol(v, &end, 10) : -1;
      if (!v || *end != '\0' || d < 0 || d > 60000) return usage("--delay-ms needs 0..60000");
      opt.delay = std::chrono::milliseconds(d);
      have_delay = true;
    } else if (arg == "--max-buffer") {
      const char* v = value();
      char* end = nullptr;
      long long b = v ? std::strtoll(v, &end, 10) : -1;
      if (!v || *end != '\0' || b < 65536) return usage("--max-buffer needs >= 65536 bytes");
      opt.max_buffer = static_cast<std::size_t>(b);
    } else if (arg == "--print") {
      print = true;
    } else {
      return usage(("unknown argument " + arg).c_str());
    }
  }
  if (listen_at.port < 0 || target.port < 0 || !have_delay) {
    return usage("--listen, --to and --delay-ms are required");
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = to_addr(listen_at);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 64) != 0) {
    std::fprintf(stderr, "delay_relay: cannot listen on %s:%d: %s\n", listen_at.host.c_str(),
                 listen_at.port, std::strerror(errno));
    return 1;
  }
  socklen_t len = sizeof a;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  if (print) {
    std::printf("listening %s:%d\n", listen_at.host.c_str(), ntohs(a.sin_port));
    std::fflush(stdout);
  }
  while (!g_stop) {
    pollfd p{lfd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int c = ::accept(lfd, nullptr, nullptr);
    if (c < 0) continue;
    std::thread(serve, c, target, opt).detach();
  }
  ::close(lfd);
  return 0;
}
