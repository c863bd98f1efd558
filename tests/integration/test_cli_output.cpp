// What the CLI prints when things go wrong around it: --json events reach a pipe while the run
// goes on, old journals with invalid UTF-8 still give valid JSON, and running out of memory is a
// message and exit status 3, never an abort.
#include <doctest/doctest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// Reads one line from a pipe, waiting at most `seconds` for it; nullopt at EOF or time-out.
std::optional<std::string> read_line(FILE* pipe, double seconds) {
  std::string line;
  const int fd = fileno(pipe);
  for (int waited_ms = 0; waited_ms < seconds * 1000;) {
    char c;
    ssize_t n = ::read(fd, &c, 1);
    if (n == 1) {
      if (c == '\n') return line;
      line.push_back(c);
      continue;
    }
    if (n == 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 100);
    waited_ms += 100;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("Integration.Output.JsonEventsReachAPipeWhileTheRunGoesOn") {
  // `second` runs until the test has read `first`'s success off the pipe (at most 60 s; the test
  // waits 30 s for that line). Before the fix, stdout was flushed only when its buffer filled or
  // the run ended, so the line came after `second` gave up.
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: piped
tasks:
  - name: first
    command: [/bin/true]
  - name: second
    after: [first]
    command: "for i in $(seq 600); do test -e go && exit 0; sleep 0.1; done; exit 1"
)Y");
  const std::string command =
      "cd '" + dir.path() + "' && exec '" + chorus_bin() + "' run --json wf.yaml 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  bool first_seen = false;
  bool summary_before_go = false;
  while (auto line = read_line(pipe, 30)) {
    auto j = nlohmann::json::parse(*line, nullptr, false);
    if (j.is_discarded()) continue;
    if (j.value("event", "") == "summary") summary_before_go = true;
    if (j.value("task", "") == "first" && j.value("state", "") == "succeeded") {
      first_seen = true;
      break;
    }
  }
  write_file(dir / "go", "");
  while (read_line(pipe, 60)) {
  }
  const int status = ::pclose(pipe);
  CHECK(first_seen);
  CHECK(!summary_before_go);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("Integration.Output.InvalidUtf8InAnOldJournalStillGivesValidJson") {
  TempDir dir;
  write_file(dir / "wf.yaml", "name: bytes\ntasks:\n  - name: hello\n    command: [/bin/true]\n");
  REQUIRE(run_chorus({"run", "wf.yaml"}, dir.path()).exit_code == 0);
  // What a journal written before the loader refused invalid UTF-8 can hold: a task "hel" 0x80
  // 0xff, a workflow file "/tmp/" 0x80.
  auto edit =
      run_process({"sqlite3", dir / ".chorus/chorus.db",
                   "UPDATE events SET name = CAST(X'68656c80ff' AS TEXT) WHERE name = "
                   "'hello'; UPDATE runs SET workflow_path = CAST(X'2f746d702f80' AS TEXT);"},
                  dir.path());
  REQUIRE(edit.exit_code == 0);
  for (std::vector<std::string> args :
       {std::vector<std::string>{"status", "--json", "--tasks"}, {"list", "--json"}}) {
    CAPTURE(args[0]);
    auto r = run_chorus(args, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    CHECK(!j.is_discarded());
    CHECK(r.out.find("\xEF\xBF\xBD") != std::string::npos);  // U+FFFD for each invalid byte
  }
  auto status = run_chorus({"status", "--json", "--tasks"}, dir.path());
  CHECK(status.out.find("hel\xEF\xBF\xBD\xEF\xBF\xBD") != std::string::npos);
}

TEST_CASE("Integration.Output.OutOfMemoryIsAMessageAndExitStatus3") {
#if CHORUS_TEST_SANITIZE || CHORUS_TEST_TSAN
  // The sanitizers reserve terabytes of address space: no RLIMIT_AS leaves them room to start.
  MESSAGE("skipped under a sanitizer");
  return;
#endif
  // 100,000 tasks in 4 MB: validating them takes about 400 MB (1.2 GB for 300,000), more than
  // the 256 MiB of address space the process gets, so a real std::bad_alloc reaches main.
  TempDir dir;
  std::string text = "name: big\ntasks:\n";
  for (int i = 0; i < 100'000; ++i) {
    text += "  - {name: t" + std::to_string(i) + ", command: [/bin/true]}\n";
  }
  write_file(dir / "wf.yaml", text);
  auto r =
      run_process({"prlimit", "--as=268435456", chorus_bin(), "validate", "wf.yaml"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("chorus: out of memory while running 'validate'") != std::string::npos);
  CHECK(r.err.find("terminate called") == std::string::npos);
}
