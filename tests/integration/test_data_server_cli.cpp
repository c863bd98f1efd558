// `chorus data-server --listen HOST:PORT`: the real binary serves the data client, says where it
// listens, refuses a bad address with exit status 2, and stops cleanly on SIGTERM and SIGINT.
#include <doctest/doctest.h>
#include <signal.h>

#include <string>

#include "runtime/netprobe/data_client.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::TempDir;

namespace {

void serve_and_stop(int sig) {
  TempDir dir;
  const pid_t pid = chorus::test::start_process(
      {chorus::test::chorus_bin(), "data-server", "--listen", "127.0.0.1:0"}, dir.path());
  std::string line;
  REQUIRE(chorus::test::eventually(
      [&] {
        line = chorus::test::read_file(dir / "bg.out");
        return line.find('\n') != std::string::npos;
      },
      20));
  REQUIRE(line.starts_with("listening on 127.0.0.1:"));
  const int port = std::stoi(line.substr(line.rfind(':') + 1));
  CHECK(port > 0);
  auto c = netprobe::DataClient::connect("127.0.0.1", port);
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  auto g = c->get(1 << 20);
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->bytes == 1U << 20);
  REQUIRE(c->put(12345).ok());
  ::kill(pid, sig);
  CHECK(chorus::test::wait_process(pid) == 0);
  const std::string err = chorus::test::read_file(dir / "bg.err");
  CHECK(err.find("data-server stopped") != std::string::npos);
  CHECK(err.find("1048576 bytes sent, 12345 bytes received") != std::string::npos);
}

}  // namespace

TEST_CASE("Integration.DataServer.ServesAndStopsOnSigterm") {
  serve_and_stop(SIGTERM);
}

TEST_CASE("Integration.DataServer.StopsOnSigint") {
  serve_and_stop(SIGINT);
}

TEST_CASE("Integration.DataServer.BadAddressIsExitStatusTwoWithTheReason") {
  TempDir dir;
  auto r = chorus::test::run_chorus({"data-server", "--listen", "localhost"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("'localhost' is not HOST:PORT: no ':PORT'") != std::string::npos);
  auto busy = chorus::test::run_chorus({"data-server", "--listen", "256.1.1.1:5"}, dir.path());
  CHECK(busy.exit_code != 0);
  CHECK(busy.err.find("256.1.1.1") != std::string::npos);
}
