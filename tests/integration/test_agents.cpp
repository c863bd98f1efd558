// `chorus run --agents N` with agents started by hand (`chorus agent --connect ...`), no Slurm:
// the real CLI on both sides over tcp://127.0.0.1, and `chorus status --nodes`.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// The endpoint and key folder `chorus run --agents` prints while it waits.
bool agent_invitation(const std::string& err, std::string& endpoint, std::string& keys) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"(--connect (tcp://\S+) --keys (\S+))"))) {
    return false;
  }
  endpoint = m[1];
  keys = m[2];
  return true;
}

}  // namespace

TEST_CASE("Integration.Agents.RunOnAgentsStartedByHand") {
  TempDir dir;
  std::string tasks;
  for (int i = 0; i < 12; ++i) {
    std::string n = "t" + std::to_string(i);
    tasks += "  - name: " + n + "\n    command: 'sleep 0.1; echo $CHORUS_NODE > " + n + ".node'\n";
  }
  write_file(dir / "wf.yaml", "name: byhand\ntasks:\n" + tasks);
  pid_t coord = start_process({chorus_bin(), "run", "wf.yaml", "--agents", "2", "--listen",
                               "tcp://127.0.0.1:*", "--agent-timeout", "3s"},
                              dir.path());
  std::string endpoint, keys;
  REQUIRE(
      eventually([&] { return agent_invitation(read_file(dir / "bg.err"), endpoint, keys); }, 20));
  CHECK(endpoint.rfind("tcp://127.0.0.1:", 0) == 0);

  // A key folder of another run is refused: exit 2 with a message naming the cause.
  TempDir other;
  {
    pid_t c2 = start_process(
        {chorus_bin(), "run", "wf.yaml", "--agents", "1", "--agent-wait", "3s"}, other.path());
    write_file(other / "wf.yaml", read_file(dir / "wf.yaml"));
    std::string e2, k2;
    bool invited =
        eventually([&] { return agent_invitation(read_file(other / "bg.err"), e2, k2); }, 20);
    REQUIRE(invited);
    auto rogue = run_process({chorus_bin(), "agent", "--connect", endpoint, "--keys", k2, "--node",
                              "rogue", "--timeout", "5s"},
                             dir.path());
    CHECK(rogue.exit_code == 2);
    CHECK(rogue.err.find("refused this agent's keys") != std::string::npos);
    ::kill(c2, SIGTERM);
    wait_process(c2);
  }

  ProcessResult a, b;
  std::thread ta([&] {
    a = run_process({chorus_bin(), "agent", "--connect", endpoint, "--keys", keys, "--node", "a",
                     "--cores", "1"},
                    dir.path());
  });
  std::thread tb([&] {
    b = run_process({chorus_bin(), "agent", "--connect", endpoint, "--keys", keys, "--node", "b",
                     "--cores", "1"},
                    dir.path());
  });
  int code = wait_process(coord);
  ta.join();
  tb.join();
  INFO("coordinator:\n", read_file(dir / "bg.err"), "\nagent a:\n", a.err, "\nagent b:\n", b.err);
  CHECK(code == 0);
  CHECK(a.exit_code == 0);  // told to shut down at the end of the run
  CHECK(b.exit_code == 0);
  std::set<std::string> nodes;
  for (int i = 0; i < 12; ++i) {
    auto l = read_lines(dir / ("t" + std::to_string(i) + ".node"));
    REQUIRE(l.size() == 1);
    nodes.insert(l[0]);
  }
  CHECK(nodes == std::set<std::string>{"a", "b"});
  CHECK_FALSE(file_exists(keys));  // the run's secret key is gone with it

  auto st = run_chorus({"status", "--nodes", "--json"}, dir.path());
  REQUIRE(st.exit_code == 0);
  auto j = nlohmann::json::parse(st.out);
  REQUIRE(j["nodes"].size() == 2);
  int attempts = 0;
  for (const auto& n : j["nodes"]) {
    CHECK(n["cores"] == 1);
    CHECK(n["attempts"].get<int>() >= 1);
    attempts += n["attempts"].get<int>();
  }
  CHECK(attempts == 12);
}
