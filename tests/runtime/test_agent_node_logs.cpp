// Per-agent CURVE keys bound to node names, and node-local task output: fetched through the
// coordinator's control socket while the run lives, failed attempts' output collected into the
// shared run folder. Real ZeroMQ sockets; agents are threads running the real agent loop.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "api/run_workflow.hpp"
#include "api/tasks.hpp"
#include "runtime/agent/agent.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/agent/log_fetch.hpp"
#include "support/agent_thread.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::AgentThread;
using chorus::test::TempDir;

namespace {

std::unique_ptr<AgentLauncher> start_launcher(const TempDir& dir, std::vector<std::string> nodes,
                                              std::size_t slots = 0) {
  AgentLauncherOptions o;
  o.key_dir = dir / "keys";
  o.agent_nodes = std::move(nodes);
  o.agent_slots = slots;
  o.heartbeat = std::chrono::milliseconds(100);
  auto l = AgentLauncher::start(o);
  REQUIRE_MESSAGE(l.ok(), l.status().message());
  return std::move(*l);
}

AgentOptions agent_as(const AgentLauncher& l, const std::string& node, const AgentKeys& keys) {
  AgentOptions o;
  o.endpoint = l.endpoint();
  o.keys = keys;
  o.node = node;
  o.capacity = {2, 0, 0};
  o.silence_timeout = std::chrono::seconds(5);
  return o;
}

int mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<int>(st.st_mode & 0777);
}

}  // namespace

TEST_CASE("Runtime.AgentKeys.EachNodeHasItsOwnPairAndAnotherNodesKeyIsRefused") {
  TempDir dir;
  auto launcher = start_launcher(dir, {"n1", "n2"});
  const std::string keys = dir / "keys";
  CHECK(mode_of(keys) == 0700);
  for (const char* n : {"n1", "n2", ".control"}) {
    CHECK(mode_of(keys + "/" + n) == 0700);
    CHECK(mode_of(keys + "/" + n + "/agent.key") == 0600);
  }
  CHECK_FALSE(chorus::test::file_exists(keys + "/agent.key"));  // no pair shared by all
  auto k1 = find_agent_keys(keys, "n1");
  auto k2 = find_agent_keys(keys, "n2");
  REQUIRE(k1.ok());
  REQUIRE(k2.ok());
  CHECK(k1->agent.public_key != k2->agent.public_key);
  auto k5 = find_agent_keys(keys, "n5");
  CHECK(k5.status().code() == ErrorCode::not_found);
  CHECK(k5.status().message().find("the run's nodes are n1, n2") != std::string::npos);

  // n1's key, claiming to be n2: authenticated (the key is this run's) but refused by name.
  AgentThread impostor(agent_as(*launcher, "n2", *k1));
  std::vector<StateUpdate> none;
  CHECK(chorus::test::eventually(
      [&] {
        launcher->poll(none);
        return impostor.done.load();
      },
      10));
  CHECK(impostor.result.code() == ErrorCode::invalid_argument);
  CHECK(impostor.result.message().find("this agent's key is node n1's, not node n2's") !=
        std::string::npos);
  CHECK(launcher->agents().empty());

  // The control pair (for chorus logs) cannot register an agent either.
  auto control = read_agent_keys(keys + "/.control");
  REQUIRE(control.ok());
  AgentThread sneaky(agent_as(*launcher, "n1", *control));
  CHECK(chorus::test::eventually(
      [&] {
        launcher->poll(none);
        return sneaky.done.load();
      },
      10));
  CHECK(sneaky.result.message().find("may not register an agent") != std::string::npos);

  // Each with its own key: both register.
  AgentThread a(agent_as(*launcher, "n1", *k1));
  AgentThread b(agent_as(*launcher, "n2", *k2));
  auto nodes = launcher->wait_for_nodes({"n1", "n2"}, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());
  CHECK(launcher->node_alive("n1"));
  CHECK(launcher->node_alive("n2"));
}

TEST_CASE("Runtime.AgentKeys.SlotsAreClaimedOnceAndBoundToTheFirstName") {
  TempDir dir;
  auto launcher = start_launcher(dir, {}, 2);
  const std::string keys = dir / "keys";
  auto a = find_agent_keys(keys, "a");
  auto b = find_agent_keys(keys, "b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->agent.public_key != b->agent.public_key);
  CHECK(find_agent_keys(keys, "a")->agent.public_key == a->agent.public_key);  // its own again
  auto c = find_agent_keys(keys, "c");
  CHECK(c.status().code() == ErrorCode::unavailable);
  CHECK(c.status().message().find("all 2 agent keys") != std::string::npos);

  {
    AgentThread first(agent_as(*launcher, "a", *a));
    auto nodes = launcher->wait_for_count(1, std::chrono::seconds(20));
    REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());
    CHECK(nodes->front().name == "a");
  }
  // Slot agent-1 is now a's: another name with that key is refused.
  AgentThread other(agent_as(*launcher, "x", *a));
  std::vector<StateUpdate> none;
  CHECK(chorus::test::eventually(
      [&] {
        launcher->poll(none);
        return other.done.load();
      },
      10));
  CHECK(other.result.message().find("is bound to node a, not x") != std::string::npos);
}

TEST_CASE("Runtime.Agent.NodeLocalOutputIsFetchedLiveAndFailuresAreCollected") {
  TempDir dir;
  auto launcher = start_launcher(dir, {"n1"});
  REQUIRE_FALSE(launcher->control_endpoint().empty());
  AgentOptions o = agent_as(*launcher, "n1", find_agent_keys(dir / "keys", "n1").value());
  o.log_dir = dir / "node-%n";
  AgentThread agent(o);
  auto nodes = launcher->wait_for_nodes({"n1"}, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());

  WorkflowGraph g;
  g.name = "nodelogs";
  g.workdir = dir.path();
  // 3 MiB of output (three fetch pieces), then it waits for the test to have fetched it.
  g.add(shell_task("big",
                   "head -c 3145728 /dev/zero | tr '\\0' x; "
                   "while [ ! -f go ]; do sleep 0.05; done"));
  g.add(shell_task("bad", "echo early; echo oops >&2; exit 3"));
  RunOptions options;
  options.state_dir = dir / "state";
  auto backend = attach_agents_backend(*launcher, *nodes);
  options.backend = backend.get();
  Result<RunOutcome> outcome = Status(ErrorCode::internal, "not run");
  std::thread run([&] { outcome = run_workflow(g, options); });

  // The run's folder on the node: <log_dir>/<run id>/.
  std::string run_dir;
  std::string shared;
  CHECK(chorus::test::eventually(
      [&] {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir / "node-n1", ec)) {
          run_dir = e.path().string();
        }
        return !run_dir.empty() &&
               std::filesystem::file_size(run_dir + "/big.1.out", ec) == 3145728U;
      },
      20));
  std::string run_id = std::filesystem::path(run_dir).filename().string();
  shared = run_log_dir(dir / "state", run_id);
  auto where = read_node_logs(shared);
  REQUIRE_MESSAGE(where.ok(), where.status().message());
  CHECK(where->control_endpoint == launcher->control_endpoint());
  CHECK(where->node_dirs["n1"] == run_dir);
  CHECK_FALSE(chorus::test::file_exists(shared + "/big.1.out"));  // it stays on the node

  std::string got;
  Status fetched = fetch_node_file(where->control_endpoint, "n1", run_dir + "/big.1.out",
                                   [&](std::string_view piece) { got.append(piece); });
  CHECK_MESSAGE(fetched.ok(), fetched.message());
  CHECK(got.size() == 3145728U);
  CHECK(got.find_first_not_of('x') == std::string::npos);

  // Only the node's output folder can be read, only from a node of the run.
  Status outside =
      fetch_node_file(where->control_endpoint, "n1", "/etc/passwd", [](std::string_view) {});
  CHECK_FALSE(outside.ok());
  CHECK(outside.message().find("serves only files below") != std::string::npos);
  Status stranger = fetch_node_file(where->control_endpoint, "n9", run_dir + "/big.1.out",
                                    [](std::string_view) {});
  CHECK(stranger.message().find("node n9 has no agent") != std::string::npos);

  chorus::test::write_file(dir / "go", "");
  run.join();
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  CHECK(outcome->summary.status == RunStatus::failed);
  // The failure's output was pushed into the shared folder before the failure was reported.
  CHECK(chorus::test::read_file(shared + "/bad.1.err") == "oops\n");
  CHECK(chorus::test::read_file(shared + "/bad.1.out") == "early\n");
  CHECK_FALSE(chorus::test::file_exists(shared + "/big.1.out"));

  // The coordinator gone, nothing answers: a clear error, at once.
  std::string control = launcher->control_endpoint();
  launcher.reset();
  Status gone = fetch_node_file(control, "n1", run_dir + "/big.1.out", [](std::string_view) {});
  CHECK(gone.code() == ErrorCode::unavailable);
  CHECK(gone.message().find("coordinator is gone") != std::string::npos);
}
