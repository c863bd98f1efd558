// Services, MPI and fine-grained tasks in one `chorus run`, and repeat groups, through the CLI:
// YAML in, real processes, the journal read back.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <map>

#include "api/run_workflow.hpp"
#include "support/journal.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

std::string program(const std::string& name) {
  return binary_dir() + "/tests/" + name;
}

// The most cores held at once, replaying the journal in order: an attempt holds its cores from
// its first 'running' event to the event that ends it (terminal, or a retry's failure).
int peak_cores(const std::vector<chorus::EventRecord>& events) {
  std::map<std::pair<std::string, std::uint32_t>, int> holding;
  int now = 0, peak = 0;
  for (const auto& e : events) {
    auto key = std::make_pair(e.name, e.attempt);
    if (e.state == chorus::TaskState::running) {
      if (holding.count(key) != 0) continue;  // a service's "ready at" event
      holding[key] = e.cores;
      now += e.cores;
      peak = std::max(peak, now);
    } else if (auto it = holding.find(key); it != holding.end()) {
      now -= it->second;
      holding.erase(it);
    }
  }
  return peak;
}

}  // namespace

TEST_CASE("Integration.Services.MpiJobServiceAnd500TasksShareTheCoresWithoutOvercommit") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: mixed
services:
  - name: echo
    command: [)Y" + program("svc_echo") +
                                  R"Y(, "{port}", --print]
    cores: 1
    ready: {tcp: 23917, timeout: 20s}
tasks:
  - name: solver
    kind: mpi
    ranks: 2
    command: [)Y" + program("mpi_hello") +
                                  R"Y(]
  - name: short
    foreach: {i: "range(0, 500)"}
    command: [/bin/true]
  - name: client
    foreach: {i: "range(0, 20)"}
    uses: [echo]
    command: "test -n \"$CHORUS_SERVICE_ECHO\""
)Y");
  auto r = run_chorus({"run", "--cores", "4", "wf.yaml"}, dir.path());
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  auto events = latest_run_events(dir / ".chorus");
  CHECK(peak_cores(events) <= 4);
  CHECK(peak_cores(events) >= 3);  // the service and the MPI job did overlap other work
  std::map<chorus::TaskKind, int> started;
  for (const auto& e : events) {
    if (e.state == chorus::TaskState::running && e.detail.empty()) ++started[e.kind];
  }
  CHECK(started[chorus::TaskKind::mpi] == 1);
  CHECK(started[chorus::TaskKind::service] == 1);
  CHECK(started[chorus::TaskKind::executable] == 520);
  auto logs = run_chorus({"logs", "latest", "solver", "--stdout"}, dir.path());
  CHECK(logs.out.find("rank 0 of 2") != std::string::npos);
}

TEST_CASE("Integration.Services.EndpointsCommandShowsALiveServiceAndItsEnvLine") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: ep
services:
  - name: web-api
    command: [)Y" + program("svc_echo") +
                                  R"Y(, "{port}"]
    replicas: 2
    ready: {http: 23941, path: /health}
tasks:
  - name: user
    uses: [web-api]
    command: "while [ ! -e stop ]; do sleep 0.05; done"
)Y");
  pid_t chorus = start_process({chorus_bin(), "run", "--cores", "4", "wf.yaml"}, dir.path());
  std::string out;
  // Both replicas ready (an endpoint is shown once its replica is ready); either may be first.
  REQUIRE(eventually(
      [&] {
        out = run_chorus({"endpoints", "latest"}, dir.path()).out;
        return out.find("http://127.0.0.1:23941") != std::string::npos &&
               out.find("http://127.0.0.1:23942") != std::string::npos;
      },
      30));
  CHECK(out.find("web-api[replica=1]") != std::string::npos);
  auto env = run_chorus({"endpoints", "latest", "--env"}, dir.path());
  CHECK(env.out == "CHORUS_SERVICE_WEB_API=http://127.0.0.1:23941,http://127.0.0.1:23942\n");
  write_file(dir / "stop", "");
  CHECK(wait_process(chorus) == 0);
  auto after = run_chorus({"endpoints", "latest"}, dir.path());
  CHECK(after.out.find("stopped") != std::string::npos);
}

TEST_CASE("Integration.Services.BadServiceInputIsALocatedError") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: bad
services:
  - name: model
    command: [./model]
tasks:
  - name: user
    uses: [modle]
    command: [/bin/true]
)Y");
  auto r = run_chorus({"validate", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("wf.yaml:3:") != std::string::npos);  // no ready probe
  CHECK(r.err.find("ready") != std::string::npos);
}

TEST_CASE("Integration.Repeat.ResumeAfterSigkillInRoundTwoContinuesThere") {
  TempDir dir;
  // Each round appends to rounds.log; round 2 waits for a file the test creates after the kill.
  write_file(dir / "wf.yaml", R"Y(name: loop
tasks:
  - name: setup
    command: "echo setup >> rounds.log"
  - repeat: learn
    max_rounds: 10
    after: [setup]
    until: {file: "round-{round}.json", key: /done, equals: true}
    tasks:
      - name: step
        command: "echo step {round} >> rounds.log; if [ {round} = 2 ]; then touch in-round-2; while [ ! -e go-on ]; do sleep 0.05; done; fi"
      - name: check
        after: [step]
        command: "if [ {round} -ge 3 ]; then echo '{{\"done\": true}}'; else echo '{{\"done\": false}}'; fi > round-{round}.json"
  - name: final
    after: [learn]
    command: "echo final >> rounds.log"
)Y");
  pid_t chorus = start_process({chorus_bin(), "run", "wf.yaml"}, dir.path());
  REQUIRE(eventually([&] { return file_exists(dir / "in-round-2"); }, 30));
  kill(chorus, SIGKILL);
  wait_process(chorus);
  write_file(dir / "go-on", "");
  auto r = run_chorus({"run", "--resume", "--", "wf.yaml"}, dir.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  // Round 1 and setup are not run again; round 2's step is (it was killed), then round 3.
  CHECK(read_lines(dir / "rounds.log") ==
        std::vector<std::string>{"setup", "step 1", "step 2", "step 2", "step 3", "final"});
  auto status = run_chorus({"status", "latest", "--tasks"}, dir.path());
  CHECK(status.out.find("check[round=3]") != std::string::npos);
  CHECK(status.out.find("step[round=4]") == std::string::npos);
}

TEST_CASE("Integration.Services.AMegabyteStdoutLineNeitherCrashesNorOrphansTheService") {
  // `ready.*` against "xready" + 1 MiB on one line crashed the coordinator (std::regex recursed per
  // character: SIGSEGV) and left the service running. Each service writes its pid first.
  TempDir dir;
  auto service = [](const std::string& name, const std::string& pattern) {
    return "  - name: " + name + "\n    command: [sh, -c, \"echo $$ > " + name +
           ".pid; printf xready; head -c 1048576 /dev/zero | tr '\\\\0' x; printf '\\\\nready "
           "at " +
           name + "\\\\n'; exec sleep 300\"]\n    ready: {stdout: \"" + pattern +
           "\", timeout: 60s}\n";
  };
  write_file(dir / "wf.yaml", "name: longline\nservices:\n" + service("greedy", "ready.*") +
                                  service("anchored", "^ready") +
                                  "tasks:\n  - name: user\n    uses: [greedy, anchored]\n"
                                  "    command: \"printf '%s' \\\"$CHORUS_SERVICE_ANCHORED\\\" > "
                                  "anchored.txt\"\n");
  auto r = run_chorus({"run", "--cores", "4", "wf.yaml"}, dir.path());
  INFO(r.out, r.err);
  std::vector<pid_t> pids;
  for (const char* name : {"greedy", "anchored"}) {
    const std::string path = dir / (std::string(name) + ".pid");
    if (file_exists(path)) pids.push_back(static_cast<pid_t>(std::stol(read_file(path))));
  }
  const bool orphaned =
      std::any_of(pids.begin(), pids.end(), [](pid_t p) { return process_alive(p); });
  for (pid_t p : pids) {
    if (process_alive(p)) kill(p, SIGKILL);
  }
  CHECK(r.exit_code == 0);
  CHECK(pids.size() == 2);
  CHECK(!orphaned);
  // The anchored probe matched the line after the long one; its endpoint is that match.
  CHECK(read_file(dir / "anchored.txt") == "ready");
}

TEST_CASE("Integration.Services.AProbePatternOf100000CharactersIsALocatedValidateError") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "name: huge\nservices:\n  - name: s\n    command: [x]\n"
             "    ready: {stdout: \"" +
                 std::string(100'000, 'a') + "\"}\ntasks:\n  - name: t\n    command: [x]\n");
  for (const char* command : {"validate", "run"}) {
    CAPTURE(command);
    auto r = run_chorus({command, "wf.yaml"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("wf.yaml:5:21: 'stdout' in the 'ready' probe of service 's': 'aaaa") !=
          std::string::npos);
    CHECK(r.err.find("(100000 bytes) is longer than the 4096 bytes") != std::string::npos);
    CHECK(r.err.size() < 1000);
  }
}
