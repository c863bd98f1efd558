// A launch batch that takes the agent longer to spawn than the coordinator's silence timeout
// (the test bed's report: 200 tasks dispatched at once to one agent, 10.5 s of spawning on a
// loaded 2-core node, and the coordinator declared the agent lost mid-batch). Real ZeroMQ on
// tcp://127.0.0.1, the real agent loop on a thread, real processes.
#include <doctest/doctest.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "adapters/local/local_launcher.hpp"
#include "api/tasks.hpp"
#include "runtime/agent/agent.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "support/agent_thread.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::AgentThread;
using chorus::test::TempDir;

namespace {

using Seconds = std::chrono::duration<double>;

// What one spawn costs here now, as the agent spawns (LocalLauncher::launch + process_group):
// the median of 40, in seconds.
double spawn_cost_s(const TaskSpec& spec) {
  LocalLauncher local(LocalLauncherOptions{});
  std::vector<double> costs;
  std::vector<StateUpdate> ended;
  LaunchRequest req;
  req.spec = &spec;
  req.node = "calibration";
  for (int i = 0; i < 40; ++i) {
    auto t0 = Clock::now();
    auto h = local.launch(req);
    REQUIRE_MESSAGE(h.ok(), h.status().message());
    (void)local.process_group(*h);
    costs.push_back(Seconds(Clock::now() - t0).count());
  }
  auto give_up = Clock::now() + std::chrono::seconds(20);
  while (ended.size() < costs.size() && Clock::now() < give_up) {
    pollfd fd{local.wait_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    local.poll(ended);
  }
  std::nth_element(costs.begin(), costs.begin() + 20, costs.end());
  return costs[20];
}

}  // namespace

TEST_CASE("Runtime.Agent.ABatchSlowerToSpawnThanTheSilenceTimeoutKeepsTheAgentAlive") {
  TempDir dir;
  TaskSpec spec = shell_task("t", "true");
  // The batch is sized to take about 4x the timeout to spawn on this machine, now.
  const auto lost_after = std::chrono::milliseconds(600);
  const double cost = spawn_cost_s(spec);
  const int n = static_cast<int>(
      std::clamp(std::ceil(4 * Seconds(lost_after).count() / std::max(cost, 1e-5)), 100.0, 8000.0));
  MESSAGE("spawn cost ", cost * 1e3, " ms: a batch of ", n, " tasks, timeout 600 ms");

  AgentLauncherOptions lo;
  lo.key_dir = dir / "keys";
  lo.lost_after = lost_after;
  lo.agent_silence = std::chrono::seconds(10);
  lo.heartbeat = std::chrono::milliseconds(50);
  auto launcher = AgentLauncher::start(lo);
  REQUIRE_MESSAGE(launcher.ok(), launcher.status().message());
  AgentLauncher& l = **launcher;
  AgentOptions ao;
  ao.endpoint = l.endpoint();
  ao.keys = read_agent_keys(l.key_dir()).value();
  ao.node = "a";
  ao.capacity = {n, 0, 0};
  ao.silence_timeout = std::chrono::seconds(10);
  AgentThread agent(ao);
  auto nodes = l.wait_for_count(1, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());

  // Every task in one launch message; the last one is cancelled at once.
  std::vector<TaskSpec> specs(static_cast<std::size_t>(n), spec);
  LaunchRequest req;
  req.node = "a";
  req.attempt = 1;
  req.workdir = dir.path();
  std::vector<LaunchHandle> handles;
  for (int i = 0; i < n; ++i) {
    specs[static_cast<std::size_t>(i)].id = static_cast<TaskId>(i);
    req.spec = &specs[static_cast<std::size_t>(i)];
    auto h = l.launch(req);
    REQUIRE_MESSAGE(h.ok(), h.status().message());
    handles.push_back(*h);
  }
  const auto sent = Clock::now();
  l.flush();
  REQUIRE(l.cancel(handles.back()).ok());

  std::vector<StateUpdate> updates;
  auto give_up = sent + std::chrono::seconds(45);
  while (static_cast<int>(updates.size()) < n && Clock::now() < give_up) {
    pollfd fd{l.wait_fd(), POLLIN, 0};
    ::poll(&fd, 1, 20);
    l.poll(updates);
  }
  const double spent = Seconds(Clock::now() - sent).count();
  int succeeded = 0;
  int lost = 0;
  std::string last_message;
  for (const StateUpdate& u : updates) {
    succeeded += u.succeeded() ? 1 : 0;
    lost += u.kind == UpdateKind::lost ? 1 : 0;
    if (u.task == static_cast<TaskId>(n - 1)) last_message = u.message;
    if (u.kind == UpdateKind::lost && lost == 1) MESSAGE("first lost: ", u.message);
  }
  MESSAGE(updates.size(), " updates in ", spent, " s: ", succeeded, " succeeded, ", lost, " lost");
  // The test means something only if spawning outlasted the timeout.
  CHECK_MESSAGE(spent > Seconds(lost_after).count(),
                "the batch was spawned within the timeout: this machine got faster since the "
                "calibration");
  CHECK(static_cast<int>(updates.size()) == n);
  CHECK(lost == 0);
  CHECK(l.node_alive("a"));
  CHECK(succeeded == n - 1);
  // Cancelled while still queued behind the batch: never started.
  CHECK(last_message == "cancelled before it started");
  l.shutdown_agents();
  CHECK(chorus::test::eventually([&] { return agent.done.load(); }, 10));
  CHECK(agent.result.ok());
}
