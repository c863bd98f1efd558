// `services:` and `uses:`: replicas become tasks of kind service, probes and restart policies are
// read, and every bad input is a located error.
#include <doctest/doctest.h>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::find_task;
using chorus::test::parse;

namespace {

std::string env_of(const TaskSpec& t, const std::string& key) {
  for (const auto& [k, v] : t.env) {
    if (k == key) return v;
  }
  return "<unset>";
}

// A workflow with one service (its body indented under `- name: s`) and one task using it.
std::string with_service(const std::string& body) {
  return "services:\n  - name: s\n" + body + "tasks:\n  - name: t\n    command: [x]\n";
}

}  // namespace

TEST_CASE("Workflows.Services.ReplicasBecomeTasks") {
  auto g = parse(R"Y(env: {SHARED: "1"}
services:
  - name: surrogate
    command: [./surrogate, --port, "{port}", --id, "{replica}"]
    cores: 2
    env: {LOG: "log-{replica}.txt"}
    workdir: "svc-{replica}"
    replicas: 3
    ready: {tcp: 5555, timeout: 30s, interval: 20ms}
    restart: {policy: always, max: 5, backoff: 2s, factor: 1.5, max_backoff: 1m}
    stop_grace: 10s
tasks:
  - name: a
    command: [x]
)Y");
  REQUIRE(g.ok());
  REQUIRE(g->tasks.size() == 4);
  REQUIRE(g->services.size() == 1);
  const ServiceSpec& s = g->services[0];
  CHECK(s.name == "surrogate");
  CHECK(s.replicas == 3);
  CHECK(s.line == 3);
  CHECK(s.column == 11);
  CHECK(s.ready.kind == ProbeKind::tcp);
  CHECK(s.ready.port == 5555);
  CHECK(s.ready.interval == std::chrono::milliseconds(20));
  CHECK(s.startup_timeout == std::chrono::seconds(30));
  CHECK(s.restart.when == RestartWhen::always);
  CHECK(s.restart.max_restarts == 5);
  CHECK(s.restart.backoff == std::chrono::seconds(2));
  CHECK(s.restart.factor == doctest::Approx(1.5));
  CHECK(s.restart.max_backoff == std::chrono::minutes(1));
  CHECK(s.stop_grace == std::chrono::seconds(10));
  // Ordinary tasks first, then the replicas: ids stay dense.
  CHECK(g->tasks[0].name == "a");
  CHECK(s.replica_tasks == std::vector<TaskId>{1, 2, 3});
  for (int r = 0; r < 3; ++r) {
    const TaskSpec& t = g->tasks[s.replica_tasks[static_cast<std::size_t>(r)]];
    const std::string port = std::to_string(5555 + r);
    CHECK(t.name == "surrogate[replica=" + std::to_string(r) + "]");
    CHECK(t.kind == TaskKind::service);
    CHECK(t.service == 0);
    CHECK(t.replica == r);
    CHECK(t.per_rank.cores == 2);
    CHECK(t.after.empty());
    CHECK(t.cmd.argv ==
          std::vector<std::string>{"./surrogate", "--port", port, "--id", std::to_string(r)});
    CHECK(env_of(t, "SHARED") == "1");
    CHECK(env_of(t, "LOG") == "log-" + std::to_string(r) + ".txt");
    CHECK(env_of(t, "CHORUS_REPLICA") == std::to_string(r));
    CHECK(env_of(t, "CHORUS_SERVICE_PORT") == port);
    CHECK(t.workdir == "/home/u/run/svc-" + std::to_string(r));
    CHECK(t.params.empty());
  }
  CHECK(g->tasks[0].service == kNoService);
  CHECK(validate_graph(*g).ok());
}

TEST_CASE("Workflows.Services.DefaultsAndSingleReplica") {
  auto g = parse(R"Y(defaults: {cores: 3, memory: 1G, retries: 4, timeout: 1m, uses: [db]}
services:
  - name: db
    command: "./db --data /tmp/{replica}"
    ready: {file: db.ready}
tasks:
  - name: a
    command: [x]
)Y");
  REQUIRE(g.ok());
  const TaskSpec* db = find_task(*g, "db");
  REQUIRE(db != nullptr);
  CHECK(db->kind == TaskKind::service);
  CHECK(db->cmd.shell == "./db --data /tmp/0");
  CHECK(db->per_rank.cores == 3);
  CHECK(db->per_rank.memory_mb == 1024);
  // Retries and timeouts are not service concepts; uses from defaults is for tasks.
  CHECK(db->retries == 0);
  CHECK(db->timeout == Duration{0});
  CHECK(db->uses.empty());
  CHECK(env_of(*db, "CHORUS_REPLICA") == "0");
  CHECK(env_of(*db, "CHORUS_SERVICE_PORT") == "<unset>");
  CHECK(g->services[0].ready.kind == ProbeKind::file);
  CHECK(g->services[0].ready.path == "db.ready");
  CHECK(g->services[0].startup_timeout == std::chrono::seconds(60));
  CHECK(g->services[0].restart.when == RestartWhen::on_failure);
  CHECK(find_task(*g, "a")->uses == std::vector<ServiceId>{0});
}

TEST_CASE("Workflows.Services.ProbeKinds") {
  auto g = parse(R"Y(services:
  - name: web
    command: [./web]
    ready: {http: 8080, path: /health}
  - name: web2
    command: [./web]
    ready: {http: 9000}
  - name: model
    command: [./model]
    ready: {stdout: "listening on (\\S+)"}
  - name: files
    command: [./f]
    ready: {file: "ready-{{replica}}"}
tasks:
  - name: a
    command: [x]
)Y");
  REQUIRE(g.ok());
  REQUIRE(g->services.size() == 4);
  CHECK(g->services[0].ready.kind == ProbeKind::http);
  CHECK(g->services[0].ready.port == 8080);
  CHECK(g->services[0].ready.path == "/health");
  CHECK(g->services[1].ready.path == "/");
  CHECK(g->services[2].ready.kind == ProbeKind::stdout_regex);
  CHECK(g->services[2].ready.regex == "listening on (\\S+)");
  CHECK(g->services[3].ready.kind == ProbeKind::file);
  CHECK(g->services[3].ready.path == "ready-{{replica}}");
  CHECK(env_of(*find_task(*g, "web"), "CHORUS_SERVICE_PORT") == "8080");
  CHECK(g->services[3].replica_tasks == std::vector<TaskId>{4});
}

TEST_CASE("Workflows.Services.BadProbes") {
  CHECK(contains(error_of(with_service("    command: [x]\n")),
                 "wf.yaml:2:11: service 's' has no 'ready' probe"));
  std::string m = error_of(with_service("    command: [x]\n    ready: {tcp: 1, file: f}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:21: the 'ready' probe of service 's' has two kinds ('tcp' and "
                 "'file'); keep one"));
  m = error_of(with_service("    command: [x]\n    ready: {tcp: 1, intervall: 1s}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:21: unknown key 'intervall' in the 'ready' probe of service 's' "
                 "(did you mean 'interval'?)"));
  m = error_of(with_service("    command: [x]\n    ready: {timeout: 1s}\n"));
  CHECK(contains(m, "wf.yaml:4:12: the 'ready' probe of service 's' names no check"));
  m = error_of(with_service("    command: [x]\n    ready: {tcp: 70000}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:18: 'tcp' in the 'ready' probe of service 's' must be between 1 "
                 "and 65535, got 70000"));
  m = error_of(with_service("    command: [x]\n    ready: {http: 0}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:19: 'http' in the 'ready' probe of service 's' must be between 1 "
                 "and 65535, got 0"));
  m = error_of(with_service("    command: [x]\n    replicas: 4\n    ready: {tcp: 65533}\n"));
  CHECK(contains(m,
                 "wf.yaml:5:18: service 's' has 4 replicas on ports 65533..65536, beyond the "
                 "last port 65535"));
  m = error_of(with_service("    command: [x]\n    ready: {file: f, path: /x}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:22: 'path' in the 'ready' probe of service 's' only applies to an "
                 "http probe"));
  m = error_of(with_service("    command: [x]\n    ready: {http: 80, path: health}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:29: 'path' in the 'ready' probe of service 's' must start with "
                 "'/', got 'health'"));
  m = error_of(with_service("    command: [x]\n    ready: {tcp: 1, timeout: 0s}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:30: 'timeout' in the 'ready' probe of service 's' must be longer "
                 "than 0"));
  m = error_of(with_service("    command: [x]\n    ready: tcp\n"));
  CHECK(contains(m, "wf.yaml:4:12: 'ready' of service 's' must be a map"));
}

TEST_CASE("Workflows.Services.BadPatternIsLocatedAndNamesRE2") {
  std::string m = error_of(with_service("    command: [x]\n    ready: {stdout: \"ready (\"}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:21: 'stdout' in the 'ready' probe of service 's': 'ready (' is not "
                 "a valid regular expression (RE2 syntax: no backreferences or lookaround): "
                 "missing ): ready ("));
  m = error_of(with_service("    command: [x]\n    ready: {stdout: \"(ok)\\\\1\"}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:21: 'stdout' in the 'ready' probe of service 's': '(ok)\\1' is "
                 "not a valid regular expression (RE2 syntax: no backreferences or lookaround)"));
}

TEST_CASE("Workflows.Services.APatternOf100000CharactersIsALocatedError") {
  // std::regex compiled this recursively and crashed `validate` and `run` with SIGSEGV.
  const std::string huge(100'000, '(');
  std::string m =
      error_of(with_service("    command: [x]\n    ready: {stdout: \"" + huge + "\"}\n"));
  CHECK(contains(m, "wf.yaml:4:21: 'stdout' in the 'ready' probe of service 's': '((((("));
  CHECK(contains(m,
                 "(100000 bytes) is longer than the 4096 bytes a ready pattern may "
                 "have"));
}

TEST_CASE("Workflows.Services.BadKeysAndValues") {
  std::string m = error_of(with_service("    command: [x]\n    replica: 2\n    ready: {tcp: 1}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:5: unknown key 'replica' in service 's' (did you mean "
                 "'replicas'?)"));
  m = error_of(with_service("    command: [x]\n    replicas: 0\n    ready: {tcp: 1}\n"));
  CHECK(contains(m, "wf.yaml:4:15: 'replicas' in service 's' must be between 1 and 10000, got 0"));
  m = error_of(with_service("    command: [x]\n    stop_grace: soon\n    ready: {tcp: 1}\n"));
  CHECK(contains(m, "wf.yaml:4:17: 'stop_grace' in service 's': "));
  m =
      error_of(with_service("    command: [x]\n    ready: {tcp: 1}\n    restart: {policy: "
                            "on-failur, backof: 1s, factor: 0.5}\n"));
  CHECK(contains(m,
                 "wf.yaml:5:23: unknown restart policy 'on-failur' in the 'restart' of service "
                 "'s' (use never, on-failure or always) (did you mean 'on-failure'?)"));
  CHECK(contains(m,
                 "wf.yaml:5:34: unknown key 'backof' in the 'restart' of service 's' (did you "
                 "mean 'backoff'?)"));
  CHECK(contains(m,
                 "wf.yaml:5:54: 'factor' in the 'restart' of service 's' must be a number of "
                 "at least 1, got '0.5'"));
  m = error_of(with_service("    command: [x]\n    ready: {tcp: 1}\n    restart: {backoff: x}\n"));
  CHECK(contains(m, "wf.yaml:5:24: 'backoff' in the 'restart' of service 's': "));
  // Task-only keys say what to use instead.
  m = error_of(
      with_service("    command: [x]\n    ready: {tcp: 1}\n    foreach: {i: [1]}\n    after: [t]\n"
                   "    retries: 2\n    timeout: 1m\n    ranks: 2\n"));
  CHECK(contains(m, "wf.yaml:5:5: services have no 'foreach': use 'replicas: N'"));
  CHECK(contains(m, "wf.yaml:6:5: services cannot wait for tasks"));
  CHECK(contains(m, "wf.yaml:7:5: services are not retried: restarts are set by 'restart:"));
  CHECK(contains(m, "wf.yaml:8:5: services run until no task needs them"));
  CHECK(contains(m, "wf.yaml:9:5: 'ranks' is for MPI tasks"));
  // No name, no command.
  m = error_of(
      "services:\n  - command: [x]\n    ready: {tcp: 1}\n  - name: b\n    ready: {tcp: "
      "2}\ntasks: [{name: t, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:2:5: service #1 has no 'name'"));
  CHECK(contains(m, "wf.yaml:4:11: service 'b' has no 'command'"));
  m = error_of(
      "services:\n  - name: \"a/b\"\n    command: [x]\n    ready: {tcp: 1}\ntasks: [{name: "
      "t, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:2:11: service name 'a/b' must not contain '[', ']' or '/'"));
}

TEST_CASE("Workflows.Services.NamesArePlaceholdersAndClashesChecked") {
  std::string m = error_of(R"Y(services:
  - name: t
    command: [x]
    ready: {tcp: 1}
  - name: u
    command: [x]
    ready: {tcp: 2}
  - name: u
    command: [x, "{port}"]
    ready: {stdout: up}
  - name: v
    command: [x, "{replca}"]
    ready: {tcp: 3}
tasks:
  - name: t
    command: [x]
)Y");
  CHECK(contains(m,
                 "wf.yaml:2:11: service 't' has the same name as task 't' (line 15); services, "
                 "tasks and repeat groups share one set of names"));
  CHECK(contains(m, "wf.yaml:8:11: duplicate service name 'u' (first defined on line 5)"));
  CHECK(contains(m,
                 "wf.yaml:9:18: '{port}' in the command of service 'u' needs a tcp or http "
                 "'ready' probe (it is the probe's port + the replica number); this one is "
                 "'stdout'"));
  CHECK(contains(m,
                 "wf.yaml:12:18: unknown placeholder '{replca}' in the command of service 'v' "
                 "(did you mean '{replica}'?"));
}

TEST_CASE("Workflows.Services.MustFitTheLargestNode") {
  std::string m = error_of(with_service("    command: [x]\n    cores: 64\n    ready: {tcp: 1}\n"));
  CHECK(contains(m,
                 "wf.yaml:4:12: service 's' can never run here: needs 64 cores, this machine "
                 "has 8"));
}

TEST_CASE("Workflows.Uses.ResolvesToServiceIndices") {
  auto g = parse(R"Y(services:
  - name: db
    command: [x]
    ready: {tcp: 100}
  - name: model
    command: [x]
    ready: {tcp: 200}
tasks:
  - name: a
    command: [x]
    uses: [model, db, model]
  - name: b
    foreach: {i: [1, 2]}
    command: [x]
    uses: model
  - name: c
    command: [x]
)Y");
  REQUIRE(g.ok());
  CHECK(find_task(*g, "a")->uses == std::vector<ServiceId>{0, 1});
  CHECK(find_task(*g, "b[i=1]")->uses == std::vector<ServiceId>{1});
  CHECK(find_task(*g, "b[i=2]")->uses == std::vector<ServiceId>{1});
  CHECK(find_task(*g, "c")->uses.empty());
  // `uses` adds no dependency edges: readiness is the runtime's business.
  CHECK(find_task(*g, "a")->after.empty());
}

TEST_CASE("Workflows.Uses.UnknownServicesAndWrongKeywords") {
  const std::string services = R"Y(services:
  - name: surrogate
    command: [x]
    ready: {tcp: 100}
tasks:
  - name: prep
    command: [x]
)Y";
  std::string m = error_of(services + "  - name: score\n    command: [x]\n    uses: [surogate]\n");
  CHECK(contains(m,
                 "wf.yaml:10:12: task 'score' uses unknown service 'surogate' (did you mean "
                 "'surrogate'?)"));
  m = error_of(services + "  - name: score\n    command: [x]\n    after: [surrogate]\n");
  CHECK(contains(m,
                 "wf.yaml:10:13: task 'score' depends on 'surrogate', but 'surrogate' is a "
                 "service: use `uses:`"));
  m = error_of(services + "  - name: score\n    command: [x]\n    uses: [prep]\n");
  CHECK(contains(m,
                 "wf.yaml:10:12: task 'score' uses 'prep', which is a task, not a service: "
                 "wait for it with 'after:'"));
  m = error_of("tasks:\n  - name: a\n    command: [x]\n    uses: [\"{i}\"]\n");
  CHECK(contains(m,
                 "wf.yaml:4:12: task 'a' uses unknown service '{i}' (the workflow has no "
                 "'services:')"));
  m = error_of("uses: [a]\ntasks: [{name: a, command: [x]}]\n");
  CHECK(contains(m, "wf.yaml:1:1: 'uses' belongs in a task under 'tasks:'"));
  m = error_of(services + "  - name: score\n    command: [x]\n    uses: [\"\"]\n");
  CHECK(contains(m, "wf.yaml:10:12: an empty service name in 'uses' in task 'score'"));
}
