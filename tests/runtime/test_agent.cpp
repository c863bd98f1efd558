// Agents over real ZeroMQ sockets on tcp://127.0.0.1: the wire encoding, a coordinator with two
// agents (threads of this process running the real agent loop), CURVE refusal of foreign keys,
// and an agent that goes silent being declared lost with its task requeued on the survivor.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

#include "api/run_workflow.hpp"
#include "api/tasks.hpp"
#include "runtime/agent/agent.hpp"
#include "runtime/agent/agent_launcher.hpp"
#include "runtime/agent/agent_protocol.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "runtime/transport/message_socket.hpp"
#include "support/agent_thread.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::AgentThread;
using chorus::test::TempDir;

namespace {

AgentOptions agent_options(const AgentLauncher& l, const std::string& node, int cores) {
  AgentOptions o;
  o.endpoint = l.endpoint();
  o.keys = read_agent_keys(l.key_dir()).value();
  o.node = node;
  o.capacity = {cores, 0, 0};
  o.silence_timeout = std::chrono::seconds(10);
  return o;
}

std::unique_ptr<AgentLauncher> start_launcher(const TempDir& dir,
                                              Duration lost_after = std::chrono::seconds(10)) {
  AgentLauncherOptions o;
  o.key_dir = dir / "keys";
  o.lost_after = lost_after;
  o.heartbeat = std::chrono::milliseconds(100);
  auto l = AgentLauncher::start(o);
  REQUIRE_MESSAGE(l.ok(), l.status().message());
  return std::move(*l);
}

}  // namespace

TEST_CASE("Runtime.AgentProtocol.BatchesRoundTripAndTruncationIsRefused") {
  TaskSpec spec = shell_task("t", "echo hi");
  spec.id = 7;
  spec.env = {{"A", "1"}};
  spec.params = {{"x", "2"}};
  spec.timeout = std::chrono::milliseconds(1500);
  LaunchRequest r;
  r.spec = &spec;
  r.attempt = 3;
  r.workdir = "/w";
  r.stdout_path = "/o";
  r.stderr_path = "/e";
  r.env = {{"CHORUS_NODE", "a"}};
  std::string b;
  begin_batch(b, AgentMessage::launch);
  append_launch(b, r);
  append_launch(b, r);
  CHECK(message_type(b).ok);
  CHECK(message_type(b).type == AgentMessage::launch);
  std::vector<TaskLaunch> got;
  REQUIRE(decode_launches(b, got));
  REQUIRE(got.size() == 2);
  CHECK(got[1].task == 7);
  CHECK(got[1].attempt == 3);
  CHECK(got[1].cmd.shell == "echo hi");
  CHECK(got[1].env == KeyValues{{"A", "1"}, {"x", "2"}, {"CHORUS_NODE", "a"}});
  CHECK(got[1].stderr_path == "/e");
  CHECK(got[1].timeout_ms == 1500);
  CHECK(got[1].cores == spec.total().cores);

  // Every truncation either fails or yields fewer records: never reads past the end.
  for (std::size_t cut = 3; cut < b.size(); cut += 7) {
    std::vector<TaskLaunch> partial;
    bool whole =
        decode_launches(std::string_view(b).substr(0, cut), partial) && partial.size() == 2;
    CHECK_FALSE(whole);
  }
  std::string truncated = b.substr(0, b.size() - 1);
  std::vector<TaskLaunch> none;
  CHECK_FALSE(decode_launches(truncated, none));

  StateUpdate u;
  u.task = 4;
  u.attempt = 1;
  u.kind = UpdateKind::timed_out;
  u.signal = 15;
  u.message = "timed out";
  std::string ub;
  begin_batch(ub, AgentMessage::updates);
  append_update(ub, u);
  std::vector<StateUpdate> ups;
  REQUIRE(decode_updates(ub, ups));
  REQUIRE(ups.size() == 1);
  CHECK(ups[0].kind == UpdateKind::timed_out);
  CHECK(ups[0].signal == 15);
  CHECK(ups[0].message == "timed out");

  std::string wrong = ub;
  wrong[0] = 99;  // another protocol version
  CHECK_FALSE(message_type(wrong).ok);
}

TEST_CASE("Runtime.AgentProtocol.LaunchCarriesTheNodesShareOfASpreadTask") {
  TaskSpec spec = shell_task("mpi", "true");
  spec.id = 1;
  spec.per_rank.cores = 2;
  spec.ranks = 6;
  LaunchRequest r;
  r.spec = &spec;
  r.node = "b";
  r.spread = {{"a", 4}, {"b", 2}};
  std::string b;
  begin_batch(b, AgentMessage::launch);
  append_launch(b, r);
  std::vector<TaskLaunch> got;
  REQUIRE(decode_launches(b, got));
  REQUIRE(got.size() == 1);
  CHECK(got[0].cores == 4);  // 2 ranks of 2 cores on b
}

TEST_CASE("Runtime.AgentProtocol.TelemetryAndProbeTargetsRoundTripAndHostileInputIsRefused") {
  AgentTelemetry t;
  t.targets_generation = 5;
  t.rx_Bps = 1.5e6;
  t.tx_Bps = 2e5;
  t.backlog_bytes = 3000;
  t.drops_per_s = 0.5;
  t.running_cores = 3;
  t.child_cpu = 2.75;
  t.links = {{0.002, 2.4e6, 1.2e6, 0.7}, {}};
  const std::string e = encode_telemetry(t);
  CHECK(message_type(e).ok);
  CHECK(message_type(e).type == AgentMessage::telemetry);
  AgentTelemetry back;
  REQUIRE(decode_telemetry(e, back));
  CHECK(back.targets_generation == 5);
  CHECK(back.rx_Bps == 1.5e6);
  CHECK(back.child_cpu == 2.75);
  CHECK(std::isnan(back.cpu_quota));  // unknown stays unknown
  REQUIRE(back.links.size() == 2);
  CHECK(back.links[0].down_Bps == 2.4e6);
  CHECK(back.links[0].age_s == 0.7);
  CHECK(std::isnan(back.links[1].rtt_s));
  for (std::size_t cut = 0; cut < e.size(); ++cut) {
    AgentTelemetry partial;
    CHECK_FALSE(decode_telemetry(std::string_view(e).substr(0, cut), partial));
  }
  // A link count the payload cannot hold is refused before anything is allocated for it.
  std::string huge = e.substr(0, 2 + 4 + 7 * 8);
  const std::uint32_t count = 0xffffffffU;
  huge.append(reinterpret_cast<const char*>(&count), 4);
  AgentTelemetry none;
  CHECK_FALSE(decode_telemetry(huge, none));
  CHECK_FALSE(decode_telemetry(e + "x", none));  // trailing bytes

  std::vector<DataSource> sources(2);
  sources[0] = {"store1", "10.0.0.5", 7000, SourceProbe::data_server, 4, 7};
  sources[1] = {"web", "web.example", 443, SourceProbe::connect, 0, 0};
  const std::string p = encode_probe_targets(9, sources);
  CHECK(message_type(p).type == AgentMessage::probe_targets);
  ProbeTargets got;
  REQUIRE(decode_probe_targets(p, got));
  CHECK(got.generation == 9);
  REQUIRE(got.sources.size() == 2);
  CHECK(got.sources[0].name == "store1");
  CHECK(got.sources[0].host == "10.0.0.5");
  CHECK(got.sources[0].port == 7000);
  CHECK(got.sources[1].probe == SourceProbe::connect);
  CHECK(got.sources[0].line == 0);  // positions stay with the coordinator
  for (std::size_t cut = 0; cut < p.size(); ++cut) {
    ProbeTargets partial;
    CHECK_FALSE(decode_probe_targets(std::string_view(p).substr(0, cut), partial));
  }
  std::string bad_probe = p;
  bad_probe.back() = 7;  // the last source's probe kind
  CHECK_FALSE(decode_probe_targets(bad_probe, got));
  sources[1].port = 70000;
  CHECK_FALSE(decode_probe_targets(encode_probe_targets(9, sources), got));
}

TEST_CASE("Runtime.Agent.AnAgentOfAnOlderProtocolIsRefusedNamingBothVersions") {
  TempDir dir;
  auto launcher = start_launcher(dir);
  const AgentKeys keys = read_agent_keys(launcher->key_dir()).value();
  auto socket = ClientSocket::connect(launcher->endpoint(), keys.coordinator_public, keys.agent);
  REQUIRE_MESSAGE(socket.ok(), socket.status().message());
  std::string hello = encode_hello({"old", {1, 0, 0}, 1, ""});
  hello[0] = 2;  // what a version 2 agent sends
  REQUIRE((*socket)->send(hello).ok());
  std::string reply;
  std::vector<StateUpdate> none;
  REQUIRE(chorus::test::eventually(
      [&] {
        launcher->poll(none);  // the coordinator's loop serves registrations
        auto got = (*socket)->receive(reply);
        return got.ok() && *got;
      },
      10));
  // Written in the old agent's own version, so it can read the reason.
  CHECK(static_cast<int>(reply[0]) == 2);
  CHECK(static_cast<int>(reply[1]) == static_cast<int>(AgentMessage::refused));
  std::string reason;
  REQUIRE(decode_refused(std::string(1, char(kAgentProtocolVersion)) + reply.substr(1), reason));
  CHECK(reason.find("agent protocol version 2 and the coordinator version " +
                    std::to_string(kAgentProtocolVersion)) != std::string::npos);
  CHECK(reason.find("same chorus build") != std::string::npos);
  CHECK(launcher->agents().empty());
}

TEST_CASE("Runtime.AgentKeys.FilesArePrivateAndLooseSecretsAreRefused") {
  TempDir dir;
  auto l = start_launcher(dir);
  struct stat st {};
  REQUIRE(::stat((dir / "keys").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  for (const char* f : {"coordinator.pub", "agent.pub", "agent.key"}) {
    REQUIRE(::stat((dir / "keys/" + f).c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
  }
  CHECK(read_agent_keys(dir / "keys").ok());
  ::chmod((dir / "keys/agent.key").c_str(), 0644);
  auto loose = read_agent_keys(dir / "keys");
  REQUIRE_FALSE(loose.ok());
  CHECK(loose.status().message().find("chmod 600") != std::string::npos);
  l.reset();
  CHECK_FALSE(std::filesystem::exists(dir / "keys"));  // the secret does not outlive the run
}

TEST_CASE("Runtime.Agent.TwentyTasksLandOnBothAgents") {
  TempDir dir;
  auto launcher = start_launcher(dir);
  CHECK(launcher->endpoint().rfind("tcp://127.0.0.1:", 0) == 0);
  AgentThread a(agent_options(*launcher, "a", 1));
  AgentThread b(agent_options(*launcher, "b", 1));
  auto nodes = launcher->wait_for_count(2, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());
  REQUIRE(nodes->size() == 2);
  std::set<std::string> names{(*nodes)[0].name, (*nodes)[1].name};
  CHECK(names == std::set<std::string>{"a", "b"});
  CHECK((*nodes)[0].capacity.cores == 1);

  WorkflowGraph g;
  g.name = "spread";
  g.workdir = dir.path();
  std::filesystem::create_directories(dir / "out");
  for (int i = 0; i < 20; ++i) {
    std::string n = "t" + std::to_string(i);
    g.add(shell_task(n, "sleep 0.05; echo $CHORUS_NODE > out/" + n));
  }
  RunOptions options;
  options.state_dir = dir / "state";
  auto backend = attach_agents_backend(*launcher, *nodes);  // lost nodes kept out of placement
  options.backend = backend.get();
  auto outcome = run_workflow(g, options);
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  CHECK(outcome->summary.status == RunStatus::succeeded);
  CHECK(outcome->summary.progress.succeeded == 20);
  std::map<std::string, int> per_node;
  for (int i = 0; i < 20; ++i) {
    auto lines = chorus::test::read_lines(dir / ("out/t" + std::to_string(i)));
    REQUIRE(lines.size() == 1);
    per_node[lines[0]] += 1;
  }
  CHECK(per_node.size() == 2);
  CHECK(per_node["a"] + per_node["b"] == 20);

  launcher->shutdown_agents();
  CHECK(chorus::test::eventually([&] { return a.done && b.done; }, 10));
  CHECK(a.result.ok());
}

TEST_CASE("Runtime.Agent.ForeignKeysCannotRegisterOrLaunch") {
  TempDir dir;
  auto launcher = start_launcher(dir);
  // Right coordinator key, but a client pair this run never issued.
  AgentOptions rogue = agent_options(*launcher, "rogue", 4);
  rogue.keys.agent = generate_curve_keypair().value();
  rogue.silence_timeout = std::chrono::seconds(5);
  AgentThread r(rogue);
  auto nodes = launcher->wait_for_count(1, std::chrono::milliseconds(1500));
  CHECK_FALSE(nodes.ok());
  CHECK(nodes.status().message().find("registered: none") != std::string::npos);
  CHECK(launcher->agents().empty());
  CHECK(launcher->refused_peers() >= 1);
  CHECK(chorus::test::eventually([&] { return r.done.load(); }, 10));
  CHECK(r.result.code() == ErrorCode::invalid_argument);
  CHECK(r.result.message().find("refused this agent's keys") != std::string::npos);

  // The key folder of another run: its coordinator key cannot open a handshake with this one.
  AgentOptions stranger = agent_options(*launcher, "stranger", 4);
  stranger.keys.coordinator_public = generate_curve_keypair().value().public_key;
  stranger.keys.agent = generate_curve_keypair().value();
  stranger.silence_timeout = std::chrono::seconds(5);
  AgentThread s(stranger);
  CHECK(chorus::test::eventually([&] { return s.done.load(); }, 10));
  CHECK(s.result.code() == ErrorCode::invalid_argument);
  CHECK(launcher->agents().empty());

  // Nothing can be launched on a node that never registered.
  TaskSpec t = shell_task("x", "touch " + (dir / "pwned"));
  t.id = 0;
  LaunchRequest req;
  req.spec = &t;
  req.node = "rogue";
  auto h = launcher->launch(req);
  CHECK_FALSE(h.ok());
  CHECK(h.status().code() == ErrorCode::unavailable);

  // The issued keys do work on the same socket.
  AgentThread good(agent_options(*launcher, "good", 1));
  auto ok = launcher->wait_for_count(1, std::chrono::seconds(20));
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->front().name == "good");
  CHECK_FALSE(chorus::test::file_exists(dir / "pwned"));
}

// The silent case (an agent SIGKILLed, found lost by its silence) is Slurm.Agents.
// NodeDownAndKilledAgentRequeueOnSurvivors; here the agent is stopped and says it is leaving.
TEST_CASE("Runtime.Agent.StoppedAgentSaysItIsLeavingAndItsTaskIsRetriedOnTheSurvivor") {
  TempDir dir;
  // Far longer than the run: the loss must come from the agent's `leaving`, not its silence.
  auto launcher = start_launcher(dir, std::chrono::seconds(60));
  auto doomed = std::make_unique<AgentThread>(agent_options(*launcher, "a", 1));
  AgentThread b(agent_options(*launcher, "b", 1));
  auto nodes = launcher->wait_for_nodes({"a", "b"}, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());

  WorkflowGraph g;
  g.name = "survive";
  g.workdir = dir.path();
  // First-fit puts t0 on a, t1 on b. t0's first attempt sleeps until agent a is killed under it;
  // its retry must land on b, the only live node.
  TaskSpec t0 = shell_task(
      "t0", "if [ \"$CHORUS_ATTEMPT\" = 1 ]; then sleep 30; fi; echo $CHORUS_NODE > t0.node");
  t0.retries = 1;
  g.add(std::move(t0));
  g.add(shell_task("t1", "echo $CHORUS_NODE > t1.node"));
  RunOptions options;
  options.state_dir = dir / "state";
  auto backend = attach_agents_backend(*launcher, *nodes);  // lost nodes kept out of placement
  options.backend = backend.get();
  // Agent a is stopped (as by SIGTERM): it says it is leaving, then kills t0.
  std::thread killer([&] {
    chorus::test::sleep_ms(500);
    doomed.reset();
  });
  auto outcome = run_workflow(g, options);
  killer.join();
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  CHECK(outcome->summary.status == RunStatus::succeeded);
  // t0 started on a (first-fit), was lost there, and ran again on b.
  auto lines = chorus::test::read_lines(dir / "t0.node");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "b");
  auto store = open_sqlite_store(dir / "state/chorus.db").value();
  auto events = store->events(outcome->run.id).value();
  bool lost_seen = false;
  for (const auto& e : events) {
    if (e.name == "t0" && e.attempt == 1 && e.state == TaskState::failed) {
      lost_seen =
          e.detail.find("lost: the agent on node a was stopped by a signal") != std::string::npos;
    }
  }
  CHECK(lost_seen);
  CHECK_FALSE(launcher->node_alive("a"));
  CHECK(launcher->node_alive("b"));
}

// What slurmstepd does when a pilot job is cancelled: it signals every process of the step, the
// task possibly before the agent. The task's death by SIGTERM just before its agent is stopped
// must read as lost with its node (and be run again), not as the task's own failure (143); a
// task killed from outside while its agent stays up still fails with its signal.
TEST_CASE("Runtime.Agent.ATaskKilledJustBeforeItsAgentStopsIsLostNotFailed") {
  TempDir dir;
  auto launcher = start_launcher(dir, std::chrono::seconds(60));
  auto doomed = std::make_unique<AgentThread>(agent_options(*launcher, "a", 1));
  AgentThread b(agent_options(*launcher, "b", 1));
  auto nodes = launcher->wait_for_nodes({"a", "b"}, std::chrono::seconds(20));
  REQUIRE_MESSAGE(nodes.ok(), nodes.status().message());

  WorkflowGraph g;
  g.name = "teardown";
  g.workdir = dir.path();
  // First-fit: t0 on a, t1 on b. t1 is killed from outside on a node that stays up.
  TaskSpec t0 = shell_task("t0",
                           "if [ \"$CHORUS_ATTEMPT\" = 1 ]; then echo $$ > t0.pid; exec sleep 30; "
                           "fi; echo $CHORUS_NODE > t0.node");
  t0.retries = 1;
  g.add(std::move(t0));
  g.add(shell_task("t1", "kill -TERM $$"));
  RunOptions options;
  options.state_dir = dir / "state";
  auto backend = attach_agents_backend(*launcher, *nodes);
  options.backend = backend.get();
  std::thread killer([&] {
    if (chorus::test::eventually([&] { return chorus::test::file_exists(dir / "t0.pid"); })) {
      chorus::test::sleep_ms(100);
      ::kill(std::stoi(chorus::test::read_file(dir / "t0.pid")), SIGTERM);  // the sweep's first...
    }
    chorus::test::sleep_ms(100);
    doomed.reset();  // ...and its agent 100 ms later
  });
  auto outcome = run_workflow(g, options);
  killer.join();
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  auto store = open_sqlite_store(dir / "state/chorus.db").value();
  auto events = store->events(outcome->run.id).value();
  std::string t0_first, t1_end;
  int t1_code = 0;
  for (const auto& e : events) {
    if (e.name == "t0" && e.attempt == 1 && e.state == TaskState::failed) t0_first = e.detail;
    if (e.name == "t1" && e.state == TaskState::failed) {
      t1_end = e.detail;
      t1_code = e.exit_code;
    }
  }
  CHECK_MESSAGE(
      t0_first.find("lost: the agent on node a was stopped by a signal") != std::string::npos,
      t0_first);
  auto lines = chorus::test::read_lines(dir / "t0.node");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "b");
  CHECK(t1_code == 143);
  CHECK_MESSAGE(t1_end.find("signal 15") != std::string::npos, t1_end);
  CHECK(outcome->summary.progress.succeeded == 1);
}

TEST_CASE("Runtime.Agent.WaitNamesTheMissingNodes") {
  TempDir dir;
  auto launcher = start_launcher(dir);
  AgentThread a(agent_options(*launcher, "n1", 1));
  auto nodes = launcher->wait_for_nodes({"n1", "n2", "n3"}, std::chrono::milliseconds(1500));
  REQUIRE_FALSE(nodes.ok());
  CHECK(nodes.status().code() == ErrorCode::unavailable);
  CHECK(nodes.status().message().find("missing n2, n3") != std::string::npos);

  // A watch that reports the starter's death ends the wait at once, with its words.
  auto watched = launcher->wait_for_nodes({"n1", "n2"}, std::chrono::seconds(60), nullptr, [] {
    return Status(ErrorCode::unavailable, "srun: error: Unable to create step");
  });
  REQUIRE_FALSE(watched.ok());
  CHECK(watched.status().message().find("Unable to create step (agents missing: n2)") !=
        std::string::npos);

  // Names outside the run are refused once it knows its nodes.
  AgentOptions other = agent_options(*launcher, "n9", 1);
  other.silence_timeout = std::chrono::seconds(5);
  AgentThread stray(other);
  std::vector<StateUpdate> none;
  CHECK(chorus::test::eventually(
      [&] {
        launcher->poll(none);  // the coordinator's loop serves registrations
        return stray.done.load();
      },
      10));
  CHECK(stray.result.message().find("not one of this run's nodes") != std::string::npos);
}
