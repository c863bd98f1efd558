// The network test bed (tests/netbed/) and `chorus data-job` on it: real namespaces, shaped
// veths, the real `chorus data-server` in a store namespace. A 3-node bed at 10/50/200 Mbit
// must order the same job's times by link rate; `down` must leave no namespace, link, cgroup or
// process behind. Skips with one line where namespaces cannot be made (not root).
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/netbed.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

std::string relay_bin() {
  return binary_dir() + "/tests/delay_relay";
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// "listening on HOST:PORT" / "listening HOST:PORT" once the program has bound.
int listened_port(const std::string& out) {
  auto colon = out.rfind(':');
  if (out.find("listening") == std::string::npos || colon == std::string::npos) return -1;
  return std::atoi(out.c_str() + colon + 1);
}

double seconds_of(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("Integration.NetBed.JobTimesFollowLinkRatesAndDownLeavesNothing") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: network namespaces need root");
    return;
  }
  TempDir dir;
  const std::string prefix = "bedi" + std::to_string(::getpid() % 100000);
  BedGuard guard{prefix, dir.path()};
  // n0 also runs under a CPU quota of half a core (a cgroup that `down` must remove).
  auto up = netbed({"up", "--prefix", prefix, "--nodes", "10,50,200", "--stores", "1", "--cpu",
                    "0.5,0,0", "--chorus", chorus_bin(), "--relay", relay_bin(), "--no-bg",
                    "--bg-levels", "0.5", "--out", dir / "bed.json"},
                   dir.path());
  if (up.exit_code == 77) {
    MESSAGE(up.err);
    return;
  }
  INFO("netbed up:\n", up.err);
  REQUIRE(up.exit_code == 0);
  auto bed = nlohmann::json::parse(read_file(dir / "bed.json"));
  REQUIRE(bed["nodes"].size() == 3);
  const std::string store = bed["stores"][0]["endpoint"];

  // The same job on every node: 4 MB in, 0.1 CPU-s, 1 MB out.
  std::vector<nlohmann::json> jobs;
  for (const auto& node : bed["nodes"]) {
    auto r = run_process(
        {"ip", "netns", "exec", node["ns"], chorus_bin(), "data-job", "--from", store, "--input",
         "4MB", "--cpu", "100ms", "--to", store, "--output", "1MB", "--json"},
        dir.path());
    INFO("node ", node["name"], ": ", r.err);
    REQUIRE(r.exit_code == 0);
    jobs.push_back(nlohmann::json::parse(r.out));
    CHECK(jobs.back()["input_bytes"] == 4000000);
    CHECK(jobs.back()["output_bytes"] == 1000000);
    CHECK(jobs.back()["cpu_s"].get<double>() >= 0.1);
  }
  INFO("jobs: ", jobs[0].dump(), "\n", jobs[1].dump(), "\n", jobs[2].dump());
  CHECK(jobs[0]["total_s"].get<double>() > jobs[1]["total_s"].get<double>());
  CHECK(jobs[1]["total_s"].get<double>() > jobs[2]["total_s"].get<double>());
  // The shaper holds both ways: the 10 Mbit node cannot move 4 MB in (or 1 MB out) faster.
  CHECK(4e6 * 8 / jobs[0]["fetch_s"].get<double>() < 11e6);
  CHECK(1e6 * 8 / jobs[0]["push_s"].get<double>() < 11e6);

  // A store that is not there: a clear message and a non-zero exit, within the timeout.
  const std::string subnet = bed["subnet"];
  const std::string nowhere = subnet.substr(0, subnet.rfind(".0.0")) + ".2.99:7000";
  auto lost = run_process({"ip", "netns", "exec", bed["nodes"][2]["ns"], chorus_bin(), "data-job",
                           "--from", nowhere, "--input", "1MB", "--timeout", "2s"},
                          dir.path());
  CHECK(lost.exit_code == 3);
  CHECK(contains(lost.err, "cannot reach the store " + nowhere));

  // Background flows (held at period 0: level 0.5 of every link) run inside the nodes.
  auto bg = netbed({"bg", "--prefix", prefix, "--hold", "0"}, dir.path());
  REQUIRE(bg.exit_code == 0);
  auto described = netbed({"describe", "--prefix", prefix}, dir.path());
  REQUIRE(described.exit_code == 0);
  std::vector<pid_t> pids;
  const auto now = nlohmann::json::parse(described.out);
  for (const auto& p : now["processes"]) pids.push_back(p["pid"]);
  REQUIRE(pids.size() == 4);  // the data server and one flow per node
  CHECK(bed["cgroups"].size() == 1);

  auto down = netbed({"down", "--prefix", prefix}, dir.path());
  INFO("netbed down:\n", down.err);
  CHECK(down.exit_code == 0);
  for (pid_t p : pids) CHECK_FALSE(process_alive(p));
  auto ns = run_process({"ip", "netns", "list"}, dir.path());
  CHECK_FALSE(contains(ns.out, prefix + "-"));
  auto links = run_process({"ip", "-o", "link"}, dir.path());
  CHECK_FALSE(contains(links.out, prefix));
  for (const auto& cg : bed["cgroups"]) CHECK_FALSE(file_exists(cg.get<std::string>()));
  // Idempotent: a second down finds nothing and says nothing.
  auto again = netbed({"down", "--prefix", prefix}, dir.path());
  CHECK(again.exit_code == 0);
  CHECK(again.err.empty());
}

TEST_CASE("Integration.NetBed.DelayRelayAddsItsLatencyBothWays") {
  // On loopback, no namespace needed: a data server, a 50 ms relay in front of it, and a
  // 1-byte fetch through each (a request and its answer: 2 x 50 ms more through the relay).
  TempDir srv_dir, relay_dir, dir;
  pid_t server =
      start_process({chorus_bin(), "data-server", "--listen", "127.0.0.1:0"}, srv_dir.path());
  int port = -1;
  REQUIRE(
      eventually([&] { return (port = listened_port(read_file(srv_dir / "bg.out"))) > 0; }, 10));
  pid_t relay = start_process({relay_bin(), "--listen", "127.0.0.1:0", "--to",
                               "127.0.0.1:" + std::to_string(port), "--delay-ms", "50", "--print"},
                              relay_dir.path());
  int rport = -1;
  REQUIRE(
      eventually([&] { return (rport = listened_port(read_file(relay_dir / "bg.out"))) > 0; }, 10));
  auto job = [&](int p, const std::string& bytes) {
    auto r = run_process({chorus_bin(), "data-job", "--from", "127.0.0.1:" + std::to_string(p),
                          "--input", bytes, "--json"},
                         dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["fetch_s"].get<double>();
  };
  const double direct = job(port, "1B");
  const double delayed = job(rport, "1B");
  CHECK(direct < 0.05);
  CHECK(delayed >= 0.1);
  CHECK(delayed < 0.5);
  // Bytes keep flowing while earlier ones wait: 200 MB through the relay take far less than
  // they would if each 64 KB chunk waited its 50 ms in turn (3,000 chunks = 150 s).
  double bulk = seconds_of([&] { job(rport, "200MB"); });
  CHECK(bulk < 20);
  ::kill(relay, SIGTERM);
  ::kill(server, SIGTERM);
  CHECK(wait_process(relay) == 0);
  wait_process(server);
}
