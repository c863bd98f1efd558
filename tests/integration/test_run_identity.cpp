// Runs and coordinators are told apart by verified identities, never by names another run can
// have: a resume kills only its own run's orphans (even ones that emptied their environment), and
// `chorus cancel` / `--resume` never mistake an unrelated process that reused a coordinator's pid.
#include <doctest/doctest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "runtime/store/state_store.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

// SIGKILLs the process groups it was given when the test ends, however it ends.
class Reaper {
 public:
  ~Reaper() {
    for (pid_t p : groups_) ::kill(-p, SIGKILL);
    for (pid_t p : pids_) ::kill(p, SIGKILL);
    for (pid_t p : waited_) (void)wait_process(p);
  }
  void group(pid_t leader) { groups_.push_back(leader); }
  void pid(pid_t p) { pids_.push_back(p); }
  void child(pid_t p) {
    groups_.push_back(p);
    waited_.push_back(p);
  }

 private:
  std::vector<pid_t> groups_, pids_, waited_;
};

pid_t first_pid_in(const std::string& path) {
  auto lines = read_lines(path);
  return lines.empty() ? -1 : static_cast<pid_t>(std::stol(lines.front()));
}

// The task records its shell's pid in pids.log, then sleeps unless done.flag exists (so the rerun
// after a resume ends at once).
constexpr const char* kLongrun = R"Y(name: longrun
tasks:
  - name: sleeper
    command: "echo $$ >> pids.log; [ -f done.flag ] || exec sleep 300"
)Y";

std::unique_ptr<chorus::StateStore> open_journal_of(const std::string& dir) {
  auto store = chorus::open_sqlite_store(dir + "/.chorus/chorus.db");
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(*store);
}

std::string run_status(const std::string& dir, const std::string& run) {
  auto r = run_chorus({"status", "--json", run}, dir);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_discarded() ? "" : j.value("status", "");
}

// The same workflow run in two state folders (both runs are longrun-1), each task started.
struct TwoRunsOfOneId {
  Reaper reaper;
  TempDir a, b;
  pid_t coord_a = 0, coord_b = 0, task_a = 0, task_b = 0;
  TwoRunsOfOneId() {
    write_file(a / "wf.yaml", kLongrun);
    write_file(b / "wf.yaml", kLongrun);
    coord_a = start_process({chorus_bin(), "run", "wf.yaml"}, a.path());
    reaper.child(coord_a);
    coord_b = start_process({chorus_bin(), "run", "wf.yaml"}, b.path());
    reaper.child(coord_b);
    REQUIRE(eventually([&] { return first_pid_in(a / "pids.log") > 0; }, 30));
    REQUIRE(eventually([&] { return first_pid_in(b / "pids.log") > 0; }, 30));
    task_a = first_pid_in(a / "pids.log");
    task_b = first_pid_in(b / "pids.log");
    reaper.group(task_a);
    reaper.group(task_b);
  }
};

}  // namespace

TEST_CASE("Integration.RunIdentity.ResumeKillsOnlyItsOwnRunsTasksWhenIdsRepeat") {
  TwoRunsOfOneId two;
  const TempDir& a = two.a;
  const TempDir& b = two.b;
  const pid_t coord_a = two.coord_a, coord_b = two.coord_b;
  const pid_t task_a = two.task_a, task_b = two.task_b;
  // Both folders hold a run named longrun-1.
  REQUIRE(run_status(a.path(), "longrun-1") == "running");
  REQUIRE(run_status(b.path(), "longrun-1") == "running");

  ::kill(coord_a, SIGKILL);
  CHECK(wait_process(coord_a) == 128 + SIGKILL);
  REQUIRE(process_alive(task_a));  // the orphan
  write_file(a / "done.flag", "");
  auto r = run_chorus({"run", "--resume", "longrun-1"}, a.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(eventually([&] { return !process_alive(task_a); }, 5));
  // The other folder's run and its task never noticed.
  CHECK(process_alive(task_b));
  CHECK(run_status(b.path(), "longrun-1") == "running");

  auto cancel = run_chorus({"cancel", "longrun-1"}, b.path());
  CHECK(cancel.exit_code == 0);
  CHECK(wait_process(coord_b) == 130);
}

// `chorus cancel` of a run whose coordinator was killed outright stops the tasks it left running
// (as a resume would), and only that run's: the other folder's run of the same id runs on.
TEST_CASE("Integration.RunIdentity.CancelOfADeadCoordinatorsRunStopsOnlyItsOrphans") {
  TwoRunsOfOneId two;
  const TempDir& a = two.a;
  const TempDir& b = two.b;
  const pid_t coord_a = two.coord_a, coord_b = two.coord_b;
  const pid_t task_a = two.task_a, task_b = two.task_b;

  ::kill(coord_a, SIGKILL);
  CHECK(wait_process(coord_a) == 128 + SIGKILL);
  REQUIRE(process_alive(task_a));  // the orphan
  auto r = run_chorus({"cancel", "longrun-1"}, a.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("marked cancelled; stopped ") != std::string::npos);
  CHECK(eventually([&] { return !process_alive(task_a); }, 5));
  CHECK(run_status(a.path(), "longrun-1") == "cancelled");
  CHECK(process_alive(task_b));
  CHECK(run_status(b.path(), "longrun-1") == "running");

  auto cancel = run_chorus({"cancel", "longrun-1"}, b.path());
  CHECK(cancel.exit_code == 0);
  CHECK(wait_process(coord_b) == 130);
}

TEST_CASE("Integration.RunIdentity.ReusedCoordinatorPidIsNeitherRunningNorSignalled") {
  Reaper reaper;
  TempDir dir;
  write_file(dir / "wf.yaml", kLongrun);
  pid_t coord = start_process({chorus_bin(), "run", "wf.yaml"}, dir.path());
  reaper.child(coord);
  REQUIRE(eventually([&] { return first_pid_in(dir / "pids.log") > 0; }, 30));
  reaper.group(first_pid_in(dir / "pids.log"));
  ::kill(coord, SIGKILL);
  CHECK(wait_process(coord) == 128 + SIGKILL);

  // An unrelated process now holds the pid the journal names (as after pid reuse).
  pid_t stranger = start_process({"/bin/sleep", "300"}, dir.path());
  reaper.child(stranger);
  REQUIRE(eventually([&] { return process_alive(stranger); }, 5));
  auto journal_names = [&](std::uint64_t start) {
    auto store = open_journal_of(dir.path());
    auto run = store->find_run("longrun-1");
    REQUIRE(run.ok());
    CHECK(run->coordinator_start != 0);  // journaled by the coordinator
    run->coordinator_pid = stranger;
    run->coordinator_start = start;
    REQUIRE(store->update_run(*run).ok());
  };

  SUBCASE("with the coordinator's start time: the stranger's differs") {
    auto store = open_journal_of(dir.path());
    auto run = store->find_run("longrun-1");
    REQUIRE(run.ok());
    const std::uint64_t coordinator_start = run->coordinator_start;
    store.reset();
    journal_names(coordinator_start);
    CHECK(run_status(dir.path(), "longrun-1") == "interrupted");
    write_file(dir / "done.flag", "");
    auto r = run_chorus({"run", "--resume", "longrun-1"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(run_status(dir.path(), "longrun-1") == "succeeded");
  }
  SUBCASE("without a start time (a journal from before they were kept)") {
    journal_names(0);
    auto r = run_chorus({"cancel", "longrun-1"}, dir.path());
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("marked cancelled") != std::string::npos);
    CHECK(run_status(dir.path(), "longrun-1") == "cancelled");
  }
  // Not signalled either way (SIGTERM would have ended the sleep).
  sleep_ms(200);
  CHECK(process_alive(stranger));
}

TEST_CASE("Integration.RunIdentity.ResumeKillsATaskThatEmptiedItsEnvironment") {
  Reaper reaper;
  TempDir dir;
  // The task's own process (its group leader) drops every variable, CHORUS_* included.
  write_file(dir / "wf.yaml", R"Y(name: bare
tasks:
  - name: sleeper
    command: [env, -i, /bin/sh, -c, "echo $$ >> pids.log; [ -f done.flag ] || exec sleep 300"]
)Y");
  pid_t coord = start_process({chorus_bin(), "run", "wf.yaml"}, dir.path());
  reaper.child(coord);
  REQUIRE(eventually([&] { return first_pid_in(dir / "pids.log") > 0; }, 30));
  const pid_t task = first_pid_in(dir / "pids.log");
  reaper.group(task);
  // Its group is journaled (within a few ms of the launch).
  REQUIRE(eventually(
      [&] {
        auto store = open_journal_of(dir.path());
        auto groups = store->task_groups("bare-1");
        return groups.ok() && groups->size() == 1 && (*groups)[0].pgid == task;
      },
      10));
  ::kill(coord, SIGKILL);
  CHECK(wait_process(coord) == 128 + SIGKILL);
  REQUIRE(process_alive(task));

  write_file(dir / "done.flag", "");
  auto r = run_chorus({"run", "--resume", "bare-1"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(eventually([&] { return !process_alive(task); }, 5));
  // Two executions in all: the orphan and the rerun, never the orphan beside a rerun that
  // succeeded while it still slept.
  CHECK(read_lines(dir / "pids.log").size() == 2);
  auto store = open_journal_of(dir.path());
  auto groups = store->task_groups("bare-1");
  REQUIRE(groups.ok());
  CHECK(groups->empty());  // forgotten once the run ended
}
