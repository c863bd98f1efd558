#include <doctest/doctest.h>
#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "adapters/local/local_launcher.hpp"
#include "support/launcher_harness.hpp"

using namespace chorus;
using namespace chorus::test;
using namespace std::chrono_literals;

namespace {

TaskSpec shell_task(TaskId id, std::string shell, Duration timeout = Duration::zero()) {
  TaskSpec spec;
  spec.id = id;
  spec.name = "t" + std::to_string(id);
  spec.cmd.shell = std::move(shell);
  spec.timeout = timeout;
  return spec;
}

TaskSpec argv_task(TaskId id, std::vector<std::string> argv) {
  TaskSpec spec;
  spec.id = id;
  spec.name = "t" + std::to_string(id);
  spec.cmd.argv = std::move(argv);
  return spec;
}

LaunchRequest request_for(const TaskSpec& spec, std::string workdir = {}) {
  LaunchRequest r;
  r.spec = &spec;
  r.workdir = std::move(workdir);
  return r;
}

LocalLauncherOptions short_grace() {
  LocalLauncherOptions o;
  o.kill_grace = 200ms;
  return o;
}

// Launches one task and waits for its single update.
StateUpdate run_one(LocalLauncher& launcher, const LaunchRequest& request) {
  auto handle = launcher.launch(request);
  REQUIRE_MESSAGE(handle.ok(), handle.status().message());
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  return updates[0];
}

}  // namespace

TEST_CASE("Adapters.Local.TrueSucceeds") {
  LocalLauncher launcher;
  TaskSpec spec = argv_task(7, {"/bin/true"});
  LaunchRequest r = request_for(spec);
  r.attempt = 2;
  StateUpdate u = run_one(launcher, r);
  CHECK(u.succeeded());
  CHECK(u.task == 7);
  CHECK(u.attempt == 2);
  CHECK(u.message.empty());
  CHECK(u.end_time > 0);
  CHECK(launcher.in_flight() == 0);
}

TEST_CASE("Adapters.Local.SearchesPathForBareProgramNames") {
  LocalLauncher launcher;
  TaskSpec ok = argv_task(0, {"true"});
  CHECK(run_one(launcher, request_for(ok)).succeeded());
  TaskSpec failing = argv_task(1, {"false"});
  StateUpdate u = run_one(launcher, request_for(failing));
  CHECK(u.kind == UpdateKind::exited);
  CHECK(u.exit_code == 1);
}

TEST_CASE("Adapters.Local.ReportsExitCode") {
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "exit 3");
  StateUpdate u = run_one(launcher, request_for(spec));
  CHECK(u.kind == UpdateKind::exited);
  CHECK(u.exit_code == 3);
  CHECK(u.signal == 0);
  CHECK(!u.succeeded());
  CHECK(u.message == "exited with code 3");
}

TEST_CASE("Adapters.Local.ReportsKillingSignal") {
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "kill -9 $$");
  StateUpdate u = run_one(launcher, request_for(spec));
  CHECK(u.kind == UpdateKind::exited);
  CHECK(u.signal == 9);
  CHECK(!u.succeeded());
  CHECK(u.message == "killed by signal 9 (SIGKILL)");
}

TEST_CASE("Adapters.Local.MissingProgramFailsAtLaunch") {
  TempDir dir;
  LocalLauncher launcher;
  TaskSpec relative = argv_task(0, {"./gen"});
  auto r1 = launcher.launch(request_for(relative, dir.path()));
  REQUIRE(!r1.ok());
  CHECK(r1.status().message() == "./gen: No such file or directory");
  CHECK(r1.status().code() == ErrorCode::not_found);

  TaskSpec searched = argv_task(1, {"chorus-no-such-program"});
  auto r2 = launcher.launch(request_for(searched));
  REQUIRE(!r2.ok());
  CHECK(r2.status().message() == "chorus-no-such-program: No such file or directory");
  CHECK(launcher.in_flight() == 0);
}

TEST_CASE("Adapters.Local.NonExecutableFailsAtLaunch") {
  TempDir dir;
  std::ofstream(dir.file("data")) << "not a program\n";
  LocalLauncher launcher;
  TaskSpec spec = argv_task(0, {"./data"});
  auto r = launcher.launch(request_for(spec, dir.path()));
  REQUIRE(!r.ok());
  CHECK(r.status().message() == "./data: Permission denied");
}

TEST_CASE("Adapters.Local.MissingWorkdirFailsAtLaunch") {
  TempDir dir;
  LocalLauncher launcher;
  TaskSpec spec = argv_task(0, {"/bin/true"});
  std::string missing = dir.file("nope");
  auto r = launcher.launch(request_for(spec, missing));
  REQUIRE(!r.ok());
  CHECK(r.status().message() == "working directory '" + missing + "': No such file or directory");
  CHECK(r.status().code() == ErrorCode::not_found);
}

TEST_CASE("Adapters.Local.UncreatableOutputIsReportedNotFatal") {
  TempDir dir;
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "echo hello");
  LaunchRequest r = request_for(spec);
  r.stdout_path = dir.file("missing-dir/out.log");
  auto h = launcher.launch(r);
  REQUIRE(h.ok());
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].succeeded());
  CHECK(updates[0].message ==
        "output lost: cannot create '" + r.stdout_path + "': No such file or directory");
}

TEST_CASE("Adapters.Local.SilentStreamsLeaveNoFile") {
  TempDir dir;
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "echo only-err >&2");
  LaunchRequest r = request_for(spec);
  r.stdout_path = dir.file("t.out");
  r.stderr_path = dir.file("t.err");
  REQUIRE(launcher.launch(r).ok());
  REQUIRE(drive(launcher, 1).size() == 1);
  struct stat st;
  CHECK(::stat(r.stdout_path.c_str(), &st) != 0);
  CHECK(read_file(r.stderr_path) == "only-err\n");
}

TEST_CASE("Adapters.Local.LargeOutputDoesNotBlockTheTask") {
  TempDir dir;
  LocalLauncher launcher;
  // 4 MiB: far more than a pipe holds, so the launcher must keep draining while it runs.
  TaskSpec spec = shell_task(0, "head -c 4194304 /dev/zero | tr '\\0' x");
  LaunchRequest r = request_for(spec);
  r.stdout_path = dir.file("big.out");
  REQUIRE(launcher.launch(r).ok());
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].succeeded());
  CHECK(read_file(r.stdout_path).size() == 4194304);
}

TEST_CASE("Adapters.Local.RejectsWhatItCannotRun") {
  LocalLauncher launcher;
  TaskSpec empty;
  empty.name = "empty";
  auto r1 = launcher.launch(request_for(empty));
  REQUIRE(!r1.ok());
  CHECK(r1.status().message() == "task 'empty' has no command to run");

  TaskSpec fn;
  fn.name = "f";
  fn.kind = TaskKind::function;
  fn.fn = [] { return Status::ok_status(); };
  auto r2 = launcher.launch(request_for(fn));
  REQUIRE(!r2.ok());
  CHECK(r2.status().code() == ErrorCode::invalid_argument);

  LaunchRequest none;
  CHECK(!launcher.launch(none).ok());
}

TEST_CASE("Adapters.Local.WritesStdoutAndStderrFiles") {
  TempDir dir;
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "echo out; echo err >&2; read line; echo \"stdin-eof=$?\"");
  LaunchRequest r = request_for(spec);
  r.stdout_path = dir.file("out.log");
  r.stderr_path = dir.file("err.log");
  std::ofstream(r.stdout_path) << "stale content that must be truncated\n";
  CHECK(run_one(launcher, r).succeeded());
  CHECK(read_file(r.stdout_path) == "out\nstdin-eof=1\n");
  CHECK(read_file(r.stderr_path) == "err\n");

  SUBCASE("the same file for both streams keeps both") {
    LaunchRequest both = request_for(spec);
    both.stdout_path = both.stderr_path = dir.file("both.log");
    CHECK(run_one(launcher, both).succeeded());
    CHECK(read_file(both.stdout_path) == "out\nerr\nstdin-eof=1\n");
  }
}

TEST_CASE("Adapters.Local.RunsInWorkdirAndResolvesRelativeProgramThere") {
  TempDir dir;
  std::string gen = dir.file("gen");
  std::ofstream(gen) << "#!/bin/sh\npwd > where.txt\n";
  ::chmod(gen.c_str(), 0755);
  LocalLauncher launcher;
  TaskSpec spec = argv_task(0, {"./gen"});
  CHECK(run_one(launcher, request_for(spec, dir.path())).succeeded());
  CHECK(read_file(dir.file("where.txt")) == std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_CASE("Adapters.Local.LayersEnvironmentLaterWins") {
  ::setenv("CHORUS_T_BASE", "base", 1);
  ::setenv("CHORUS_T_OVER", "base", 1);
  ::unsetenv("CHORUS_T_LATE");
  LocalLauncher launcher;
  ::setenv("CHORUS_T_LATE", "late", 1);  // after construction: not seen by tasks

  TempDir dir;
  TaskSpec spec = shell_task(0,
                             "printf '%s|' \"$A\" \"$B\" \"$P\" \"$R\" \"$D\" \"$CHORUS_T_BASE\" "
                             "\"$CHORUS_T_OVER\" \"${CHORUS_T_LATE-unset}\"; "
                             "env | grep -c '^B='; env | grep -c '^CHORUS_T_OVER='");
  spec.env = {{"A", "spec"}, {"B", "spec"}, {"CHORUS_T_OVER", "spec"}, {"D", "1"}, {"D", "2"}};
  spec.params = {{"P", "7"}, {"B", "param"}};
  LaunchRequest r = request_for(spec);
  r.env = {{"B", "run"}, {"R", "run"}};
  r.stdout_path = dir.file("out");
  CHECK(run_one(launcher, r).succeeded());
  CHECK(read_file(r.stdout_path) == "spec|run|7|run|2|base|spec|unset|1\n1\n");
  ::unsetenv("CHORUS_T_BASE");
  ::unsetenv("CHORUS_T_OVER");
  ::unsetenv("CHORUS_T_LATE");

  SUBCASE("a task without extra variables gets the captured environment") {
    TaskSpec plain = shell_task(1, "printf '%s' \"$CHORUS_T_BASE\"");
    LaunchRequest pr = request_for(plain);
    pr.stdout_path = dir.file("plain");
    CHECK(run_one(launcher, pr).succeeded());
    CHECK(read_file(pr.stdout_path) == "base");
  }
}

TEST_CASE("Adapters.Local.RejectsBadVariableName") {
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "true");
  spec.env = {{"A=B", "x"}};
  auto r = launcher.launch(request_for(spec));
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  CHECK(r.status().message().find("'A=B'") != std::string::npos);
}

TEST_CASE("Adapters.Local.LeaderExitKillsWhatIsLeftOfItsGroup") {
  become_subreaper();
  TempDir dir;
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "sleep 100 & echo $! > '" + dir.file("pids") + "'; exit 0");
  StateUpdate u = run_one(launcher, request_for(spec));
  CHECK(u.succeeded());
  auto pids = read_pids(dir.file("pids"));
  REQUIRE(pids.size() == 1);
  CHECK(process_gone(pids[0]));
}

TEST_CASE("Adapters.Local.TimeoutKillsWholeGroup") {
  become_subreaper();
  TempDir dir;
  LocalLauncher launcher(short_grace());
  std::string pids_file = dir.file("pids");
  TaskSpec spec = shell_task(0,
                             "echo $$ > '" + pids_file + "'; sleep 100 & echo $! >> '" + pids_file +
                                 "'; sleep 100 & echo $! >> '" + pids_file + "'; wait",
                             1500ms);
  TimePoint before = Clock::now();
  REQUIRE(launcher.launch(request_for(spec)).ok());
  TimePoint after = Clock::now();
  auto deadline = launcher.next_deadline();
  REQUIRE(deadline.has_value());
  CHECK(*deadline >= before + 1500ms);
  CHECK(*deadline <= after + 1500ms);

  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].kind == UpdateKind::timed_out);
  CHECK(updates[0].message.rfind("timed out after 1.50s", 0) == 0);
  CHECK(!launcher.next_deadline().has_value());
  auto pids = read_pids(pids_file);
  REQUIRE(pids.size() == 3);
  for (pid_t pid : pids) CHECK_MESSAGE(process_gone(pid), "pid ", pid, " survived");
}

TEST_CASE("Adapters.Local.IgnoredSigtermIsKilledAfterGrace") {
  LocalLauncher launcher(short_grace());
  // The timeout leaves the shell ample time to install its trap before the SIGTERM.
  TaskSpec spec = shell_task(0, "trap '' TERM; sleep 100", 1500ms);
  StateUpdate u = run_one(launcher, request_for(spec));
  CHECK(u.kind == UpdateKind::timed_out);
  CHECK(u.signal == SIGKILL);
  CHECK(u.message == "timed out after 1.50s; SIGKILLed after ignoring SIGTERM for 200ms");
}

TEST_CASE("Adapters.Local.CancelIsIdempotent") {
  LocalLauncher launcher(short_grace());
  TaskSpec spec = shell_task(0, "sleep 100");
  auto handle = launcher.launch(request_for(spec));
  REQUIRE(handle.ok());
  CHECK(launcher.cancel(*handle).ok());
  CHECK(launcher.cancel(*handle).ok());
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].kind == UpdateKind::cancelled);
  CHECK(updates[0].signal == SIGTERM);
  CHECK(updates[0].message == "cancelled");
  CHECK(launcher.in_flight() == 0);

  CHECK(launcher.cancel(*handle).ok());      // finished
  CHECK(launcher.cancel(*handle + 1).ok());  // never issued
  CHECK(!wait_fd_ready(launcher));
  std::vector<StateUpdate> more;
  launcher.poll(more);
  CHECK(more.empty());
}

TEST_CASE("Adapters.Local.CancelEscalatesToSigkill") {
  TempDir dir;
  LocalLauncher launcher(short_grace());
  TaskSpec spec = shell_task(0, "trap '' TERM; echo $$ > '" + dir.file("ready") + "'; sleep 100");
  auto handle = launcher.launch(request_for(spec));
  REQUIRE(handle.ok());
  // A cancel before the trap is installed would just end it with SIGTERM.
  REQUIRE(wait_for_pids(dir.file("ready"), 1).size() == 1);
  REQUIRE(launcher.cancel(*handle).ok());
  REQUIRE(launcher.next_deadline().has_value());
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].kind == UpdateKind::cancelled);
  CHECK(updates[0].signal == SIGKILL);
  CHECK(updates[0].message == "cancelled; SIGKILLed after ignoring SIGTERM for 200ms");
}

TEST_CASE("Adapters.Local.CancelKeepsOutcomeOfTaskThatAlreadyEnded") {
  LocalLauncher launcher;
  TaskSpec spec = shell_task(0, "exit 4");
  auto handle = launcher.launch(request_for(spec));
  REQUIRE(handle.ok());
  // Wait for the exit without polling, so the task has ended but is not reaped yet.
  pollfd pfd{launcher.wait_fd(), POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 10000) == 1);
  CHECK(launcher.cancel(*handle).ok());
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].kind == UpdateKind::exited);
  CHECK(updates[0].exit_code == 4);
}

TEST_CASE("Adapters.Local.NextDeadlineIsTheEarliest") {
  LocalLauncher launcher(short_grace());
  TaskSpec late = shell_task(0, "sleep 100", 50s);
  TaskSpec early = shell_task(1, "sleep 100", 10s);
  TaskSpec none = shell_task(2, "sleep 100");
  CHECK(!launcher.next_deadline().has_value());
  TimePoint before = Clock::now();
  auto h_late = launcher.launch(request_for(late));
  auto h_early = launcher.launch(request_for(early));
  auto h_none = launcher.launch(request_for(none));
  TimePoint after = Clock::now();
  REQUIRE((h_late.ok() && h_early.ok() && h_none.ok()));
  REQUIRE(launcher.next_deadline().has_value());
  CHECK(*launcher.next_deadline() >= before + 10s);
  CHECK(*launcher.next_deadline() <= after + 10s);

  REQUIRE(launcher.cancel(*h_early).ok());  // its deadline becomes the kill grace
  CHECK(*launcher.next_deadline() <= Clock::now() + 200ms);
  REQUIRE(drive(launcher, 1).size() == 1);
  CHECK(*launcher.next_deadline() >= before + 50s);
  CHECK(*launcher.next_deadline() <= after + 50s);
  CHECK(launcher.in_flight() == 2);
}

TEST_CASE("Adapters.Local.DestructorLeavesNoProcessAlive") {
  become_subreaper();
  TempDir dir;
  std::vector<pid_t> pids;
  {
    LocalLauncher launcher;
    std::vector<TaskSpec> specs;
    for (TaskId i = 0; i < 3; ++i) {
      std::string file = dir.file("pids" + std::to_string(i));
      specs.push_back(
          shell_task(i, "echo $$ > '" + file + "'; sleep 100 & echo $! >> '" + file + "'; wait"));
    }
    for (const TaskSpec& s : specs) REQUIRE(launcher.launch(request_for(s)).ok());
    for (TaskId i = 0; i < 3; ++i) {
      auto p = wait_for_pids(dir.file("pids" + std::to_string(i)), 2);
      REQUIRE(p.size() == 2);
      pids.insert(pids.end(), p.begin(), p.end());
    }
    CHECK(launcher.in_flight() == 3);
  }
  for (pid_t pid : pids) CHECK_MESSAGE(process_gone(pid), "pid ", pid, " survived");
}

TEST_CASE("Adapters.Local.ManyConcurrentTasksEachReportedOnce") {
  constexpr TaskId kTasks = 200;
  LocalLauncher launcher;
  std::vector<TaskSpec> specs;
  specs.reserve(kTasks);
  for (TaskId i = 0; i < kTasks; ++i)
    specs.push_back(shell_task(i, "exit " + std::to_string(i % 7)));
  std::set<LaunchHandle> handles;
  for (const TaskSpec& s : specs) {
    auto h = launcher.launch(request_for(s));
    REQUIRE_MESSAGE(h.ok(), h.status().message());
    handles.insert(*h);
  }
  CHECK(handles.size() == kTasks);
  CHECK(launcher.in_flight() == kTasks);
  auto updates = drive(launcher, kTasks, 120s);
  REQUIRE(updates.size() == kTasks);
  std::vector<int> seen(kTasks, 0);
  for (const StateUpdate& u : updates) {
    REQUIRE(u.task < kTasks);
    ++seen[u.task];
    CHECK(u.kind == UpdateKind::exited);
    CHECK(u.exit_code == static_cast<int>(u.task % 7));
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == kTasks);
  CHECK(launcher.in_flight() == 0);
  std::vector<StateUpdate> more;
  launcher.poll(more);
  CHECK(more.empty());
}

TEST_CASE("Adapters.Local.HandlesAreNeverReused") {
  LocalLauncher launcher;
  TaskSpec spec = argv_task(0, {"/bin/true"});
  std::set<LaunchHandle> handles;
  for (int i = 0; i < 5; ++i) {
    auto h = launcher.launch(request_for(spec));
    REQUIRE(h.ok());
    handles.insert(*h);
    REQUIRE(drive(launcher, 1).size() == 1);  // frees the slot, which the next launch reuses
  }
  CHECK(handles.size() == 5);
}
