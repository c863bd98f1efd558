// The data server and its client over real sockets on 127.0.0.1 (runtime/netprobe/).

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "runtime/netprobe/data_client.hpp"
#include "runtime/netprobe/data_protocol.hpp"
#include "runtime/netprobe/data_server.hpp"
#include "runtime/netprobe/socket_util.hpp"

using namespace chorus;
using namespace chorus::netprobe;

namespace {

// A DataServer serving on a thread of the test; stopped and joined when the object dies.
struct ServerThread {
  std::unique_ptr<DataServer> server;
  Status result;
  std::thread thread;
  explicit ServerThread(DataServerOptions options = {}) {
    auto s = DataServer::listen("127.0.0.1:0", options);
    REQUIRE_MESSAGE(s.ok(), s.status().message());
    server = std::move(*s);
    thread = std::thread([this] { result = server->run(); });
  }
  ~ServerThread() {
    server->stop();
    thread.join();
  }
  int port() const { return server->port(); }
};

// A plain blocking TCP socket to the server, for requests the client library never sends.
int raw_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

void raw_send(int fd, std::string_view s) {
  REQUIRE(::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()));
}

// Everything the server sends until it closes (or 5 s pass).
std::string read_to_close(int fd) {
  std::string got;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

// Reads exactly n bytes (or what comes within 5 s).
std::string read_n(int fd, std::size_t n) {
  std::string got;
  char buf[4096];
  while (got.size() < n) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    const ssize_t k = ::recv(fd, buf, std::min(sizeof buf, n - got.size()), 0);
    if (k <= 0) break;
    got.append(buf, static_cast<std::size_t>(k));
  }
  return got;
}

}  // namespace

TEST_CASE("Runtime.Netprobe.HostPortParsesAndRefusesWithTheReason") {
  auto a = parse_host_port("10.0.0.1:7000");
  REQUIRE(a.ok());
  CHECK(a->host == "10.0.0.1");
  CHECK(a->port == 7000);
  auto b = parse_host_port("[::1]:0");
  REQUIRE(b.ok());
  CHECK(b->host == "::1");
  CHECK(b->port == 0);
  auto c = parse_host_port(":9");
  REQUIRE(c.ok());
  CHECK(c->host.empty());
  CHECK(parse_host_port("host").status().message().find("no ':PORT'") != std::string::npos);
  CHECK(parse_host_port("host:70000").status().message().find("0 to 65535") != std::string::npos);
  CHECK(parse_host_port("host:x").status().code() == ErrorCode::invalid_argument);
  CHECK(parse_host_port("::1:80").status().message().find("brackets") != std::string::npos);
}

TEST_CASE("Runtime.Netprobe.DataServerListensOnAnEphemeralPortAndRefusesABusyOne") {
  ServerThread st;
  CHECK(st.port() > 0);
  CHECK(st.server->host() == "127.0.0.1");
  auto again = DataServer::listen("127.0.0.1:" + std::to_string(st.port()));
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == ErrorCode::io_error);
  CHECK(again.status().message().find("cannot listen on 127.0.0.1:") != std::string::npos);
  auto bad = DataServer::listen("127.0.0.1");
  CHECK(bad.status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("Runtime.Netprobe.TransfersHaveExactSizesOnOneConnection") {
  ServerThread st;
  auto c = DataClient::connect("127.0.0.1", st.port());
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->connect_seconds() >= 0);
  auto rtt = c->ping();
  REQUIRE_MESSAGE(rtt.ok(), rtt.status().message());
  CHECK(*rtt > 0);
  std::uint64_t down = 0, up = 0;
  for (std::uint64_t n : {0ULL, 1ULL, 65535ULL, 65536ULL, 65537ULL, (1ULL << 20) + 7, 5ULL << 20}) {
    auto g = c->get(n);
    REQUIRE_MESSAGE(g.ok(), g.status().message());
    CHECK(g->bytes == n);
    CHECK(g->seconds > 0);
    auto p = c->put(n);
    REQUIRE_MESSAGE(p.ok(), p.status().message());
    CHECK(p->bytes == n);
    down += n;
    up += n;
  }
  REQUIRE(c->ping().ok());  // the stream is still in step after all of them
  const auto s = st.server->stats();
  CHECK(s.bytes_sent == down);
  CHECK(s.bytes_received == up);
  CHECK(s.requests == 2 + 14);
  CHECK(s.errors == 0);
}

TEST_CASE("Runtime.Netprobe.PipelinedRequestsAreAnsweredInOrder") {
  ServerThread st;
  const int fd = raw_connect(st.port());
  raw_send(fd, "PING\nGET 3\nPING\nPUT 2\nxyPING\n");
  CHECK(read_n(fd, 5 + 5 + 3 + 5 + 5 + 5) == "PONG\nOK 3\nabcPONG\nOK 2\nPONG\n");
  ::close(fd);
}

TEST_CASE("Runtime.Netprobe.BadRequestsGetErrAndTheConnectionCloses") {
  ServerThread st;
  const std::string too_big = "GET " + std::to_string(kMaxTransfer + 1) + "\n";
  const struct {
    std::string request;
    std::string reason;
  } cases[] = {
      {"HELLO\n", "unknown request"},
      {"GET\n", "unknown request"},
      {"GET -5\n", "bad size"},
      {"PUT 12x\n", "bad size"},
      {"GET 99999999999999999999999999\n", "bad size"},
      {too_big, "bad size"},
      {std::string(200, 'A'), "longer than 64 bytes"},
      {std::string("PI\0NG\n", 6), "unknown request"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.request);
    const int fd = raw_connect(st.port());
    raw_send(fd, c.request);
    const std::string got = read_to_close(fd);
    CHECK(got.starts_with("ERR "));
    CHECK(got.find(c.reason) != std::string::npos);
    CHECK(got.back() == '\n');
    ::close(fd);
  }
  CHECK(st.server->stats().errors == std::size(cases));
  // A client's own ERR: the library reports the server's reason.
  auto c = DataClient::connect("127.0.0.1", st.port());
  REQUIRE(c.ok());
  auto g = c->get(kMaxTransfer + 1);
  CHECK(g.status().code() == ErrorCode::invalid_argument);
  CHECK(g.status().message().find("bad size") != std::string::npos);
  // And the server still serves.
  auto d = DataClient::connect("127.0.0.1", st.port());
  REQUIRE(d.ok());
  CHECK(d->ping().ok());
}

TEST_CASE("Runtime.Netprobe.RandomGarbageNeverStopsTheServer") {
  ServerThread st;
  std::mt19937 rng(14);
  for (int i = 0; i < 200; ++i) {
    std::string junk(rng() % 300, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng() % 8 == 0 ? '\n' : rng() % 256);
    const int fd = raw_connect(st.port());
    ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    read_to_close(fd);
    ::close(fd);
  }
  auto c = DataClient::connect("127.0.0.1", st.port());
  REQUIRE(c.ok());
  auto g = c->get(1000);
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->bytes == 1000);
}

TEST_CASE("Runtime.Netprobe.AClientVanishingMidPutDoesNotWedgeTheServer") {
  DataServerOptions options;
  options.idle_timeout = std::chrono::milliseconds(300);
  ServerThread st(options);
  // One that vanishes (its socket closed with most of the PUT unsent) ...
  const int gone = raw_connect(st.port());
  raw_send(gone, "PUT 1000000\n" + std::string(1000, 'x'));
  ::close(gone);
  // ... and one that just stalls mid-PUT with its connection open.
  const int stalled = raw_connect(st.port());
  raw_send(stalled, "PUT 1000000\n" + std::string(5000, 'x'));
  // Others are served meanwhile, in full.
  auto c = DataClient::connect("127.0.0.1", st.port());
  REQUIRE(c.ok());
  auto g = c->get(4ULL << 20);
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->bytes == 4ULL << 20);
  auto p = c->put(4ULL << 20);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  // The stalled one is dropped after the idle timeout: the server closes it.
  const std::string got = read_to_close(stalled);
  CHECK(got.empty());
  ::close(stalled);
  CHECK(st.server->stats().dropped >= 1);
  CHECK(st.server->stats().bytes_received == 1000 + 5000 + (4ULL << 20));
  // (c idled past the timeout too and was dropped; a new connection is served.)
  auto e = DataClient::connect("127.0.0.1", st.port());
  REQUIRE(e.ok());
  CHECK(e->ping().ok());
}

TEST_CASE("Runtime.Netprobe.ClientErrorsNameTheServer") {
  int port = 0;
  {
    ServerThread st;
    port = st.port();
  }
  auto c = DataClient::connect("127.0.0.1", port, std::chrono::seconds(2));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == ErrorCode::unavailable);
  CHECK(c.status().message().find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  auto t = tcp_connect_seconds("127.0.0.1", port, std::chrono::seconds(2));
  CHECK(t.status().code() == ErrorCode::unavailable);
  auto n = DataClient::connect("no-such-host.invalid", 1, std::chrono::seconds(2));
  CHECK(n.status().code() == ErrorCode::invalid_argument);
  ServerThread st;
  auto ok = tcp_connect_seconds("127.0.0.1", st.port());
  REQUIRE(ok.ok());
  CHECK(*ok >= 0);
}

TEST_CASE("Runtime.Netprobe.ASilentServerTimesTheClientOut") {
  // A socket that listens and never answers: connect succeeds (the backlog), PING never returns.
  auto mute = DataServer::listen("127.0.0.1:0");  // bound and listening, never run()
  REQUIRE(mute.ok());
  auto c = DataClient::connect("127.0.0.1", (*mute)->port());
  REQUIRE(c.ok());
  c->set_timeout(std::chrono::milliseconds(200));
  auto p = c->ping();
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == ErrorCode::unavailable);
  CHECK(p.status().message().find("timed out") != std::string::npos);
  // The connection is unusable afterwards, and says so.
  CHECK(c->get(1).status().message().find("earlier error") != std::string::npos);
}

TEST_CASE("Runtime.Netprobe.TwoPartTransfersTimeTheSecondPart") {
  ServerThread st;
  auto c = DataClient::connect("127.0.0.1", st.port());
  REQUIRE(c.ok());
  auto g = c->get_after(100'000, 300'000);
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->bytes == 300'000);
  CHECK(g->seconds > 0);
  auto p = c->put_after(200'000, 3ULL << 20);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  CHECK(p->bytes == 3ULL << 20);
  CHECK(p->seconds > 0);
  REQUIRE(c->ping().ok());  // in step afterwards
  const auto s = st.server->stats();
  CHECK(s.bytes_sent == 400'000);
  CHECK(s.bytes_received == 200'000 + (3ULL << 20));
}
