// Services in the coordinator, with real processes (tests/programs/svc_echo.c), real sockets and
// the SQLite journal: readiness gating, start-up failures, restarts, replicas, stopping.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "api/run_workflow.hpp"
#include "api/tasks.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::TempDir;

namespace {

std::string svc_echo() {
  return chorus::test::binary_dir() + "/tests/svc_echo";
}

// `span` consecutive ports nothing listens on right now, below Linux's ephemeral range (32768+)
// so that no outgoing connection of this machine holds one of them meanwhile.
int free_port(int span = 1) {
  static unsigned seed = static_cast<unsigned>(getpid());
  for (int attempt = 0; attempt < 200; ++attempt) {
    seed = seed * 1103515245u + 12345u;
    const int base = 20000 + static_cast<int>((seed >> 8) % 10000);
    bool all_free = true;
    for (int p = base; p < base + span && all_free; ++p) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<std::uint16_t>(p));
      all_free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      close(fd);
    }
    if (all_free) return base;
  }
  return 29000;
}

ServiceSpec tcp_service(const std::string& name, int port, int replicas = 1) {
  ServiceSpec s;
  s.name = name;
  s.replicas = replicas;
  s.ready.kind = ProbeKind::tcp;
  s.ready.port = port;
  s.ready.interval = std::chrono::milliseconds(20);
  s.startup_timeout = std::chrono::seconds(20);
  s.restart.backoff = std::chrono::milliseconds(100);
  return s;
}

TaskSpec replica_running(const std::string& args) {
  return shell_task("replica", "exec " + svc_echo() + " \"$CHORUS_SERVICE_PORT\" " + args);
}

struct Run {
  TempDir dir;
  RunOutcome outcome;
  std::vector<EventRecord> events;

  bool go(WorkflowGraph& g) {
    g.name = "svc";
    g.workdir = dir.path();
    RunOptions o;
    o.state_dir = dir / "state";
    o.kill_grace = std::chrono::seconds(2);
    // More cores than this machine may have: each service holds one for the whole run.
    o.nodes = {NodeInfo{"localhost", {8, 0, 0}}};
    auto r = run_workflow(g, o);
    if (!r.ok()) {
      MESSAGE(r.status().message());
      return false;
    }
    outcome = *r;
    auto store = open_sqlite_store(journal_path(o.state_dir));
    events = (*store)->events(outcome.run.id).value();
    return true;
  }

  // Time of the first event of `task` in `state` whose detail contains `text`; -1 if none.
  double when(const std::string& task, TaskState state, const std::string& text = "") const {
    for (const auto& e : events) {
      if (e.name == task && e.state == state && e.detail.find(text) != std::string::npos)
        return e.time;
    }
    return -1;
  }
  const EventRecord* last(const std::string& task) const {
    const EventRecord* found = nullptr;
    for (const auto& e : events) {
      if (e.name == task) found = &e;
    }
    return found;
  }
};

}  // namespace

TEST_CASE("Runtime.Services.TaskStartsOnlyOnceItsSlowServiceIsReady") {
  Run run;
  WorkflowGraph g;
  const int port = free_port();
  ServiceId echo = add_service(g, tcp_service("echo", port), replica_running("--delay-ms 700"));
  auto user = shell_task("user", "echo \"$CHORUS_SERVICE_ECHO\" > endpoint.txt");
  user.uses = {echo};
  g.add(user);
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  const double ready = run.when("echo", TaskState::running, "ready at 127.0.0.1:");
  const double started = run.when("user", TaskState::running);
  REQUIRE(ready > 0);
  CHECK(started >= ready);
  CHECK(chorus::test::read_file(run.dir / "endpoint.txt") ==
        "127.0.0.1:" + std::to_string(port) + "\n");
  // Stopped once its only user was done: a planned stop, journaled as succeeded.
  REQUIRE(run.last("echo") != nullptr);
  CHECK(run.last("echo")->state == TaskState::succeeded);
}

TEST_CASE("Runtime.Services.ServiceThatNeverGetsReadyFailsItsUsersWithTheReason") {
  Run run;
  WorkflowGraph g;
  auto svc = tcp_service("slow", free_port());
  svc.startup_timeout = std::chrono::milliseconds(600);
  svc.restart.when = RestartWhen::never;
  ServiceId slow = add_service(g, svc, shell_task("replica", "sleep 30"));
  auto user = shell_task("user", "true");
  user.uses = {slow};
  g.add(user);
  auto other = shell_task("unrelated", "true");
  g.add(other);
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::failed);
  const EventRecord* u = run.last("user");
  REQUIRE(u != nullptr);
  CHECK(u->state == TaskState::failed);
  CHECK(u->detail.find("service 'slow' is not available") != std::string::npos);
  CHECK(u->detail.find("not ready after 600ms") != std::string::npos);
  CHECK(u->detail.find("Connection refused") != std::string::npos);
  CHECK(run.last("unrelated")->state == TaskState::succeeded);
}

TEST_CASE("Runtime.Services.CrashedServiceRestartsWithinItsPolicyAndIsJournaled") {
  Run run;
  WorkflowGraph g;
  auto svc = tcp_service("flaky", free_port());
  svc.restart.max_restarts = 2;
  ServiceId flaky =
      add_service(g, svc, replica_running("--crash-once " + run.dir / "crashed.marker"));
  auto user = shell_task("user", "true");
  user.uses = {flaky};
  g.add(user);
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  CHECK(run.when("flaky", TaskState::failed, "(restart 1 of 2 in 100ms)") > 0);
  CHECK(run.when("flaky", TaskState::running, "ready at") > 0);
  CHECK(run.last("user")->state == TaskState::succeeded);
}

TEST_CASE("Runtime.Services.RestartsExhaustedFailTheServiceAndItsUsers") {
  Run run;
  WorkflowGraph g;
  auto svc = tcp_service("broken", free_port());
  svc.restart.max_restarts = 1;
  ServiceId broken = add_service(g, svc, shell_task("replica", "echo boom >&2; exit 3"));
  auto user = shell_task("user", "true");
  user.uses = {broken};
  g.add(user);
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::failed);
  const EventRecord* u = run.last("user");
  REQUIRE(u != nullptr);
  CHECK(u->state == TaskState::failed);
  MESSAGE(u->detail);
  CHECK(u->detail.find("replica 'broken' exited with code 3") != std::string::npos);
  CHECK(u->detail.find("after 1 restart(s)") != std::string::npos);
  CHECK(run.last("broken")->state == TaskState::failed);
}

TEST_CASE("Runtime.Services.ReplicasListenOnTheirOwnPortsAndUsersGetAllEndpoints") {
  Run run;
  WorkflowGraph g;
  const int port = free_port(3);
  ServiceId echo = add_service(g, tcp_service("echo", port, 3), replica_running(""));
  auto user = shell_task("user", "printf '%s' \"$CHORUS_SERVICE_ECHO\" > endpoints.txt");
  user.uses = {echo};
  g.add(user);
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  std::string expected;
  for (int r = 0; r < 3; ++r) {
    if (r > 0) expected += ",";
    expected += "127.0.0.1:" + std::to_string(port + r);
  }
  CHECK(chorus::test::read_file(run.dir / "endpoints.txt") == expected);
  CHECK(run.when("echo[replica=2]", TaskState::running,
                 "ready at 127.0.0.1:" + std::to_string(port + 2)) > 0);
}

TEST_CASE("Runtime.Services.HttpStdoutAndFileProbes") {
  Run run;
  WorkflowGraph g;
  const int port = free_port(3);
  auto http = tcp_service("web", port);
  http.ready.kind = ProbeKind::http;
  http.ready.path = "/health";
  ServiceId web = add_service(g, http, replica_running("--delay-ms 300"));
  auto out = tcp_service("printer", 0);
  out.ready.kind = ProbeKind::stdout_regex;
  out.ready.regex = "listening on (\\S+)";
  ServiceId printer = add_service(
      g, out, shell_task("r", "exec " + svc_echo() + " " + std::to_string(port + 1) + " --print"));
  auto file = tcp_service("filer", 0);
  file.ready.kind = ProbeKind::file;
  file.ready.path = "filer.addr";
  ServiceId filer =
      add_service(g, file,
                  shell_task("r", "exec " + svc_echo() + " " + std::to_string(port + 2) +
                                      " --file filer.addr"));
  auto user = shell_task("user",
                         "printf '%s|%s|%s' \"$CHORUS_SERVICE_WEB\" \"$CHORUS_SERVICE_PRINTER\" "
                         "\"$CHORUS_SERVICE_FILER\" > env.txt");
  user.uses = {web, printer, filer};
  g.add(user);
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  CHECK(chorus::test::read_file(run.dir / "env.txt") ==
        "http://127.0.0.1:" + std::to_string(port) + "|127.0.0.1:" + std::to_string(port + 1) +
            "|127.0.0.1:" + std::to_string(port + 2));
}

TEST_CASE("Runtime.Services.HttpProbeWaitsFor2xx") {
  Run run;
  WorkflowGraph g;
  auto http = tcp_service("web", free_port());
  http.ready.kind = ProbeKind::http;
  http.startup_timeout = std::chrono::milliseconds(500);
  http.restart.when = RestartWhen::never;
  ServiceId web = add_service(g, http, replica_running("--status 503"));
  auto user = shell_task("user", "true");
  user.uses = {web};
  g.add(user);
  REQUIRE(run.go(g));
  const EventRecord* u = run.last("user");
  REQUIRE(u != nullptr);
  CHECK(u->state == TaskState::failed);
  CHECK(u->detail.find("answered 503") != std::string::npos);
}

TEST_CASE("Runtime.Services.StopWhenTheirUsersAreDoneNotAtTheEndOfTheRun") {
  Run run;
  WorkflowGraph g;
  ServiceId echo = add_service(g, tcp_service("echo", free_port()), replica_running(""));
  auto user = shell_task("user", "true");
  user.uses = {echo};
  g.add(user);
  g.add(shell_task("long", "sleep 1.5"));
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  const double stopped = run.when("echo", TaskState::succeeded);
  const double long_end = run.when("long", TaskState::succeeded);
  REQUIRE(stopped > 0);
  CHECK(stopped < long_end);
}

TEST_CASE("Runtime.Services.UnusedServiceRunsUntilTheOtherWorkIsDone") {
  Run run;
  WorkflowGraph g;
  add_service(g, tcp_service("echo", free_port()), replica_running(""));
  g.add(shell_task("work", "sleep 0.5"));
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  CHECK(run.when("echo", TaskState::succeeded) >= run.when("work", TaskState::succeeded));
}

TEST_CASE("Runtime.Services.TaskBlockedForeverByServicesFailsInsteadOfHanging") {
  Run run;
  WorkflowGraph g;
  // Two 1-core replicas fill this run's 2-core node; the user needs a core too and would wait
  // for them, and they for it.
  ServiceId echo = add_service(g, tcp_service("echo", free_port(2), 2), replica_running(""));
  auto user = shell_task("user", "true");
  user.uses = {echo};
  g.add(user);
  RunOptions o;
  o.state_dir = run.dir / "state";
  o.nodes = {NodeInfo{"localhost", {2, 0, 0}}};
  g.name = "svc";
  g.workdir = run.dir.path();
  auto r = run_workflow(g, o);
  REQUIRE(r.ok());
  CHECK(r->summary.status == RunStatus::failed);
  REQUIRE(!r->summary.failures.empty());
  for (const auto& f : r->summary.failures) MESSAGE(f.name << ": " << f.message);
  CHECK(r->summary.failures[0].name == "user");
  CHECK(r->summary.failures[0].message.find("the running services hold the cores (2 of 2 on "
                                            "localhost)") != std::string::npos);
}

TEST_CASE("Runtime.Services.StopGraceBoundsHowLongAServiceIgnoringSigtermMayTakeToStop") {
  TempDir dir;
  WorkflowGraph g;
  g.name = "svc";
  g.workdir = dir.path();
  auto svc = tcp_service("stubborn", 0);
  svc.ready.kind = ProbeKind::file;
  svc.ready.path = "stubborn.up";
  svc.stop_grace = std::chrono::milliseconds(300);
  // An ignored SIGTERM stays ignored in the children too: only SIGKILL ends it.
  ServiceId id = add_service(
      g, svc, shell_task("r", "trap '' TERM; touch stubborn.up; while :; do sleep 0.1; done"));
  auto user = shell_task("user", "true");
  user.uses = {id};
  g.add(user);
  RunOptions o;
  o.state_dir = dir / "state";
  o.kill_grace = std::chrono::seconds(120);  // the run's default, which the service overrides
  o.nodes = {NodeInfo{"localhost", {8, 0, 0}}};
  const auto start = Clock::now();
  auto r = run_workflow(g, o);
  REQUIRE(r.ok());
  CHECK(r->summary.status == RunStatus::succeeded);
  CHECK(Clock::now() - start < std::chrono::seconds(60));  // not the run's 120 s grace
  auto store = open_sqlite_store(journal_path(o.state_dir));
  auto events = (*store)->events(r->run.id).value();
  int code = 0;
  for (const auto& e : events) {
    if (e.name == "stubborn" && e.state == TaskState::succeeded) code = e.exit_code;
  }
  CHECK(code == 128 + 9);
}

TEST_CASE("Runtime.Services.FunctionTasksThatUseAServiceGetItsEndpoints") {
  Run run;
  WorkflowGraph g;
  const int port = free_port();
  ServiceId echo = add_service(g, tcp_service("echo", port), replica_running(""));
  std::string seen = "unset", outside = "unset";
  auto user = function_task("fn-user", [&] { seen = service_endpoints("echo"); });
  user.uses = {echo};
  g.add(user);
  g.add(function_task("fn-plain", [&] { outside = service_endpoints("echo"); }));
  REQUIRE(run.go(g));
  CHECK(run.outcome.summary.status == RunStatus::succeeded);
  CHECK(seen == "127.0.0.1:" + std::to_string(port));
  CHECK(outside.empty());
}
