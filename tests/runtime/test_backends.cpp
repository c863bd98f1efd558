// Execution backends (runtime/backends/): the local one, agents started by hand (threads of this
// process running the real agent loop over real ZeroMQ), a site's AgentStarter that fails or
// dies while the agents register, cancellation while waiting, and run_workflow on each.
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include "api/run_workflow.hpp"
#include "api/tasks.hpp"
#include "support/agent_thread.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/backends/srun_agent_step.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "schedulers/policy_registry.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::AgentThread;
using chorus::test::TempDir;

namespace {

AgentOptions invited(const AgentInvitation& i, const std::string& node) {
  AgentOptions o;
  o.endpoint = i.endpoint;
  o.keys = find_agent_keys(i.key_dir, node).value();  // claims a slot, as chorus agent does
  o.node = node;
  o.capacity = {1, 0, 0};
  o.silence_timeout = std::chrono::seconds(10);
  return o;
}

// A site's starter that records what it was asked and fails where told to.
struct ScriptedStarter final : AgentStarter {
  Status start_result;
  Status check_result;
  int* stopped = nullptr;
  std::string* invited_at = nullptr;
  Status start(const AgentInvitation& i) override {
    if (invited_at != nullptr) *invited_at = i.endpoint;
    return start_result;
  }
  Status check() override { return check_result; }
  void stop() override { ++*stopped; }
  std::string output_tail(int) const override { return "what the starter printed"; }
};

std::unique_ptr<PlacementPolicy> first_fit() {
  return PolicyRegistry::with_builtins().make_placement("first-fit").value();
}

}  // namespace

TEST_CASE("Runtime.Backends.LocalIsThisMachineAndWrapsNothing") {
  auto local = make_local_backend();
  CHECK(local->name() == "local");
  CHECK(local->start({}).ok());
  REQUIRE(local->nodes().size() == 1);
  CHECK(local->nodes()[0].name == local_node_info().name);
  for (Launcher* l : local->launchers()) CHECK(l != nullptr);
  CHECK(local->launchers()[static_cast<std::size_t>(TaskKind::service)] ==
        local->launchers()[static_cast<std::size_t>(TaskKind::executable)]);
  auto policy = first_fit();
  PlacementPolicy* raw = policy.get();
  CHECK(local->wrap_placement(std::move(policy)).get() == raw);

  auto eight = make_local_backend({{NodeInfo{"here", {8, 0, 0}}}});
  REQUIRE(eight->nodes().size() == 1);
  CHECK(eight->nodes()[0].capacity.cores == 8);
  local->stop();
  local->stop();  // idempotent
}

TEST_CASE("Runtime.Backends.AgentsByHandRegisterRunAndExitOnStop") {
  TempDir dir;
  std::vector<std::unique_ptr<AgentThread>> agents;
  AgentsBackendOptions o;
  o.count = 2;
  o.agent_wait = std::chrono::seconds(20);
  AgentInvitation seen;
  o.on_listening = [&](const AgentInvitation& i) {
    seen = i;
    agents.push_back(std::make_unique<AgentThread>(invited(i, "a")));
    agents.push_back(std::make_unique<AgentThread>(invited(i, "b")));
  };
  auto backend = make_agents_backend(std::move(o));
  CHECK(backend->agents() == nullptr);
  CancelToken cancel;
  Status started = backend->start({&cancel, dir / "state"});
  REQUIRE_MESSAGE(started.ok(), started.message());
  CHECK(seen.count == 2);
  CHECK(seen.endpoint.rfind("tcp://127.0.0.1:", 0) == 0);
  // The key folder lies in the state folder, one per coordinator process.
  CHECK(seen.key_dir == (dir / "state/agents/") + std::to_string(::getpid()));
  REQUIRE(backend->nodes().size() == 2);
  std::set<std::string> names{backend->nodes()[0].name, backend->nodes()[1].name};
  CHECK(names == std::set<std::string>{"a", "b"});
  REQUIRE(backend->agents() != nullptr);
  CHECK(backend->launchers()[static_cast<std::size_t>(TaskKind::executable)] == backend->agents());

  WorkflowGraph g;
  g.name = "byhand";
  g.workdir = dir.path();
  for (int i = 0; i < 8; ++i) {
    g.add(shell_task("t" + std::to_string(i),
                     "sleep 0.05; echo $CHORUS_NODE > t" + std::to_string(i) + ".node"));
  }
  RunOptions options;
  options.state_dir = dir / "state";
  options.backend = backend.get();
  options.cancel = &cancel;
  auto outcome = run_workflow(g, options);
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  CHECK(outcome->summary.status == RunStatus::succeeded);
  CHECK(outcome->run.nodes.size() == 2);
  std::set<std::string> ran;
  for (int i = 0; i < 8; ++i) {
    auto l = chorus::test::read_lines(dir / ("t" + std::to_string(i) + ".node"));
    REQUIRE(l.size() == 1);
    ran.insert(l[0]);
  }
  CHECK(ran == std::set<std::string>{"a", "b"});

  backend->stop();
  CHECK(backend->agents() == nullptr);
  CHECK(backend->nodes().empty());
  CHECK(chorus::test::eventually([&] { return agents[0]->done && agents[1]->done; }, 10));
  CHECK(agents[0]->result.ok());
  CHECK_FALSE(std::filesystem::exists(seen.key_dir));  // the secret keys went with it
  backend->stop();
}

TEST_CASE("Runtime.Backends.LostNodeIsNotNowInTheWrappedPolicy") {
  TempDir dir;
  std::unique_ptr<AgentThread> agent;
  AgentsBackendOptions o;
  o.count = 1;
  o.agent_timeout = std::chrono::milliseconds(800);
  o.on_listening = [&](const AgentInvitation& i) {
    agent = std::make_unique<AgentThread>(invited(i, "a"));
  };
  std::string lost;
  o.on_all_lost = [&](const std::string& why) { lost = why; };
  auto backend = make_agents_backend(std::move(o));
  CancelToken cancel;
  REQUIRE(backend->start({&cancel, dir / "state"}).ok());
  auto policy = backend->wrap_placement(first_fit());
  TaskSpec t = shell_task("t", "true");
  const NodeInfo node = backend->nodes()[0];
  NodeView view{&node, node.capacity, 0};
  CHECK(policy->filter(t, view) == Fit::now);
  agent.reset();  // silent from now on
  CHECK(chorus::test::eventually(
      [&] {
        std::vector<StateUpdate> out;
        backend->agents()->poll(out);  // the launcher notices silence while polled
        return !backend->agents()->node_alive("a");
      },
      10));
  CHECK(policy->filter(t, view) == Fit::later);
  backend->stop();
}

TEST_CASE("Runtime.Backends.AgentsThatNeverComeOrACancelEndTheStart") {
  TempDir dir;
  {
    AgentsBackendOptions o;
    o.count = 2;
    o.agent_wait = std::chrono::milliseconds(300);
    auto backend = make_agents_backend(std::move(o));
    CancelToken cancel;
    Status s = backend->start({&cancel, dir / "state"});
    CHECK(s.code() == ErrorCode::unavailable);
    CHECK(s.message().find("agents did not register within") != std::string::npos);
    CHECK(s.message().find("registered: none") != std::string::npos);
    CHECK(backend->agents() == nullptr);  // undone: nothing listens any more
    CHECK(backend->nodes().empty());
  }
  {
    AgentsBackendOptions o;
    o.count = 1;
    CancelToken cancel;
    o.on_listening = [&](const AgentInvitation&) { cancel.request(); };
    auto backend = make_agents_backend(std::move(o));
    Status s = backend->start({&cancel, dir / "state"});
    CHECK(s.code() == ErrorCode::cancelled);
    CHECK(s.message() == "cancelled while waiting for agents");
  }
  {
    // Started but not waited for: run_workflow refuses it by name.
    AgentsBackendOptions o;
    o.count = 1;
    auto backend = make_agents_backend(std::move(o));
    WorkflowGraph g;
    g.name = "x";
    g.add(shell_task("t", "true"));
    RunOptions options;
    options.state_dir = dir / "state";
    options.backend = backend.get();
    auto r = run_workflow(g, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "the agents backend is not started (call its start() before run_workflow)");
  }
}

TEST_CASE("Runtime.Backends.StarterThatFailsOrDiesEndsTheStartAndIsStopped") {
  TempDir dir;
  int stopped = 0;
  {
    auto starter = std::make_unique<ScriptedStarter>();
    starter->start_result = io_error("srun: not found");
    starter->stopped = &stopped;
    AgentsBackendOptions o;
    o.nodes = {NodeInfo{"n1", {4, 0, 0}}};
    o.starter = std::move(starter);
    auto backend = make_agents_backend(std::move(o));
    Status s = backend->start({nullptr, dir / "state"});
    CHECK(s.code() == ErrorCode::io_error);
    CHECK(s.message() == "cannot start the agents: srun: not found");
    CHECK(stopped == 1);
  }
  {
    auto starter = std::make_unique<ScriptedStarter>();
    starter->check_result = Status(ErrorCode::unavailable, "the step ended");
    starter->stopped = &stopped;
    AgentsBackendOptions o;
    o.nodes = {NodeInfo{"n1", {4, 0, 0}}, NodeInfo{"n2", {4, 0, 0}}};
    o.starter = std::move(starter);
    auto backend = make_agents_backend(std::move(o));
    Status s = backend->start({nullptr, dir / "state"});
    CHECK(s.code() == ErrorCode::unavailable);
    CHECK(s.message() == "the step ended (agents missing: n1, n2)");
    CHECK(stopped == 2);
    CHECK(backend->site_output(10) == "what the starter printed");
    backend->stop();
    CHECK(stopped == 2);  // once
  }
}

TEST_CASE("Runtime.Backends.NamedNodesKeepTheirCapacityAndTakeTheAgentsAddress") {
  TempDir dir;
  int stopped = 0;
  std::string endpoint;
  std::unique_ptr<AgentThread> agent;
  auto starter = std::make_unique<ScriptedStarter>();
  starter->stopped = &stopped;
  starter->invited_at = &endpoint;
  AgentsBackendOptions o;
  o.nodes = {NodeInfo{"n1", {6, 0, 0}}};
  o.on_listening = [&](const AgentInvitation& i) {
    AgentOptions a;
    a.endpoint = i.endpoint;
    a.keys = find_agent_keys(i.key_dir, "n1").value();
    a.node = "n1";
    a.capacity = {2, 0, 0};
    a.silence_timeout = std::chrono::seconds(10);
    agent = std::make_unique<AgentThread>(a);
  };
  o.starter = std::move(starter);
  auto backend = make_agents_backend(std::move(o));
  Status s = backend->start({nullptr, dir / "state"});
  REQUIRE_MESSAGE(s.ok(), s.message());
  CHECK(endpoint.rfind("tcp://127.0.0.1:", 0) == 0);  // the starter was given the endpoint
  REQUIRE(backend->nodes().size() == 1);
  CHECK(backend->nodes()[0].capacity.cores == 6);  // the site's share, not the agent's report
  CHECK(backend->nodes()[0].address == "127.0.0.1");
  backend->stop();
  CHECK(stopped == 1);
  CHECK(chorus::test::eventually([&] { return agent->done.load(); }, 10));
}

TEST_CASE("Runtime.Backends.SlurmAgentStepIsOneStepPerAllocation") {
  auto argv = agent_step_argv(3, "/opt/chorus", "tcp://10.0.0.1:5555", "/s/agents/7", "2m",
                              "/tmp/%n/chorus");
  const std::vector<std::string> want = {"srun",
                                         "--overlap",
                                         "--nodes=3",
                                         "--ntasks=3",
                                         "--ntasks-per-node=1",
                                         "--cpus-per-task=1",
                                         "--kill-on-bad-exit=0",
                                         "--no-kill",
                                         "--quiet",
                                         "--job-name=chorus-agents",
                                         "/opt/chorus",
                                         "agent",
                                         "--connect",
                                         "tcp://10.0.0.1:5555",
                                         "--keys",
                                         "/s/agents/7",
                                         "--timeout",
                                         "2m",
                                         "--node-logs",
                                         "/tmp/%n/chorus"};
  CHECK(argv == want);
  CHECK(agent_step_argv(1, "c", "e", "k", "1s", "").size() == want.size() - 2);
}
