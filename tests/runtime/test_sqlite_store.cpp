#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "runtime/store/sqlite_store.hpp"
#include "runtime/store/state_store.hpp"

using namespace chorus;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "chorus-store-XXXXXX").string();
    const char* made = mkdtemp(pattern.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::unique_ptr<StateStore> open_store(const std::string& path) {
  auto store = open_sqlite_store(path);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(*store);
}

RunInfo new_run(std::string name, std::string path = "/work/flow.yaml", double created = 0) {
  RunInfo info;
  info.workflow_name = std::move(name);
  info.workflow_path = std::move(path);
  info.workdir = "/scratch/w";
  info.created = created;
  info.total_tasks = 4;
  info.coordinator_pid = 4242;
  info.host = "node01";
  return info;
}

RunInfo create(StateStore& store, std::string name, std::string path = "/work/flow.yaml",
               double created = 0) {
  auto run = store.create_run(new_run(std::move(name), std::move(path), created));
  REQUIRE_MESSAGE(run.ok(), run.status().message());
  return *run;
}

TaskEvent event(TaskId task, std::string_view name, TaskState state, double time,
                std::uint32_t attempt = 1, int exit_code = 0, std::uint64_t fingerprint = 0,
                std::string detail = {}) {
  TaskEvent e;
  e.task = task;
  e.name = name;
  e.state = state;
  e.time = time;
  e.attempt = attempt;
  e.exit_code = exit_code;
  e.fingerprint = fingerprint;
  e.detail = std::move(detail);
  return e;
}

void append(StateStore& store, const std::string& run, const std::vector<TaskEvent>& events) {
  auto s = store.append(run, events);
  REQUIRE_MESSAGE(s.ok(), s.message());
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs SQL on the file directly, to forge journals this build must refuse.
void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  std::string text = message != nullptr ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, text);
}

}  // namespace

TEST_CASE("Runtime.SqliteStore.IdsIncreasePerWorkflowName") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  CHECK(create(*store, "quickstart").id == "quickstart-1");
  CHECK(create(*store, "other").id == "other-1");
  CHECK(create(*store, "quickstart").id == "quickstart-2");
  CHECK(create(*store, "my flow/v2 ü").id == "my_flow_v2-1");
  CHECK(create(*store, "").id == "run-1");
  CHECK(create(*store, "???").id == "run-2");
  CHECK(create(*store, "quickstart").id == "quickstart-3");

  // Numbering continues in a new process's view of the file.
  store.reset();
  auto again = open_store(dir.file("journal.db"));
  CHECK(create(*again, "quickstart").id == "quickstart-4");
}

TEST_CASE("Runtime.SqliteStore.ListsRunsWithAllFields") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  RunInfo info = new_run("alpha", "/a/flow.yaml", 100.5);
  info.status = RunStatus::interrupted;
  info.updated = 101.25;
  auto created = store->create_run(info);
  REQUIRE(created.ok());
  create(*store, "beta", "/b/flow.yaml", 200);

  auto runs = store->list_runs();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  const RunInfo& a = (*runs)[0];
  CHECK(a.id == "alpha-1");
  CHECK(a.workflow_name == "alpha");
  CHECK(a.workflow_path == "/a/flow.yaml");
  CHECK(a.workdir == "/scratch/w");
  CHECK(a.status == RunStatus::interrupted);
  CHECK(a.created == 100.5);
  CHECK(a.updated == 101.25);
  CHECK(a.total_tasks == 4);
  CHECK(a.coordinator_pid == 4242);
  CHECK(a.host == "node01");
  CHECK((*runs)[1].id == "beta-1");
  // An unset creation time is filled with the wall clock.
  CHECK(create(*store, "gamma").created > 1.6e9);
}

TEST_CASE("Runtime.SqliteStore.FindsRunsByIdLatestNumberAndPrefix") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  create(*store, "quickstart", "/q.yaml", 10);  // quickstart-1
  create(*store, "quickstart", "/q.yaml", 20);  // quickstart-2
  create(*store, "train", "/t.yaml", 30);       // train-1, the newest
  create(*store, "train", "/t.yaml", 25);       // train-2
  create(*store, "train", "/t.yaml", 15);       // train-3
  create(*store, "eval", "/e.yaml", 5);         // eval-1

  CHECK(store->find_run("quickstart-2")->id == "quickstart-2");
  CHECK(store->find_run("latest")->id == "train-1");  // by creation time, not by insertion
  CHECK(store->find_run("3")->id == "train-3");       // the only id ending in "-3"
  CHECK(store->find_run("ev")->id == "eval-1");       // unique prefix
  CHECK(store->find_run("quickstart-1")->id == "quickstart-1");  // exact beats prefix of none
  CHECK(!store->find_run("quickstart-").ok());                   // prefix of two
}

TEST_CASE("Runtime.SqliteStore.FindRunExplainsAmbiguousAndUnknownIds") {
  TempDir dir;
  const std::string path = dir.file("journal.db");
  auto store = open_store(path);

  auto none = store->find_run("latest");
  REQUIRE(!none.ok());
  CHECK(none.status().code() == ErrorCode::not_found);
  CHECK(contains(none.status().message(), path));

  create(*store, "quickstart");
  create(*store, "quickstart");
  create(*store, "eval");

  auto ambiguous = store->find_run("q");
  REQUIRE(!ambiguous.ok());
  CHECK(ambiguous.status().message() == "ambiguous run id 'q': quickstart-1, quickstart-2");

  // "1" ends two ids (quickstart-1, eval-1) and is no prefix: ambiguous between those two.
  auto number = store->find_run("1");
  REQUIRE(!number.ok());
  CHECK(number.status().message() == "ambiguous run id '1': quickstart-1, eval-1");

  auto unknown = store->find_run("nosuch");
  REQUIRE(!unknown.ok());
  CHECK(unknown.status().code() == ErrorCode::not_found);
  CHECK(unknown.status().message() ==
        "no run 'nosuch' in " + path + " (runs: quickstart-1, quickstart-2, eval-1)");
  CHECK(!store->find_run("").ok());
  CHECK(!store->find_run("7").ok());
}

TEST_CASE("Runtime.SqliteStore.UnknownRunListsOnlyTheNewestRuns") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  for (int i = 0; i < 14; ++i) create(*store, "sweep", "/s.yaml", 100 + i);
  auto unknown = store->find_run("x");
  REQUIRE(!unknown.ok());
  const std::string message = unknown.status().message();
  CHECK(contains(message, "4 older, sweep-5, "));
  CHECK(contains(message, "sweep-14)"));
  CHECK(!contains(message, "sweep-4,"));
}

TEST_CASE("Runtime.SqliteStore.LatestRunOfAWorkflowFile") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  create(*store, "a", "/flows/a.yaml", 10);
  create(*store, "a", "/flows/a.yaml", 30);
  create(*store, "b", "/flows/b.yaml", 40);
  create(*store, "a", "/elsewhere/a.yaml", 50);

  auto latest = store->latest_run_of("/flows/a.yaml");
  REQUIRE(latest.ok());
  CHECK(latest->id == "a-2");
  CHECK(store->latest_run_of("/elsewhere/a.yaml")->id == "a-3");
  auto missing = store->latest_run_of("/flows/c.yaml");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == ErrorCode::not_found);
}

TEST_CASE("Runtime.SqliteStore.UpdateRunRoundTrips") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  RunInfo run = create(*store, "flow", "/f.yaml", 10);
  run.status = RunStatus::failed;
  run.updated = 99.5;
  run.total_tasks = 17;
  run.coordinator_pid = 0;
  run.host = "login2";
  run.workdir = "/new/dir";
  REQUIRE(store->update_run(run).ok());

  auto other = open_store(dir.file("journal.db"));
  auto back = other->find_run(run.id);
  REQUIRE(back.ok());
  CHECK(back->status == RunStatus::failed);
  CHECK(back->updated == 99.5);
  CHECK(back->created == 10);
  CHECK(back->total_tasks == 17);
  CHECK(back->coordinator_pid == 0);
  CHECK(back->host == "login2");
  CHECK(back->workdir == "/new/dir");

  RunInfo ghost = run;
  ghost.id = "ghost-1";
  auto s = store->update_run(ghost);
  CHECK(s.code() == ErrorCode::not_found);
}

TEST_CASE("Runtime.SqliteStore.ReplayFoldsRetriesAndTerminalStates") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string run = create(*store, "flow").id;
  using S = TaskState;
  // Task 2 fails, is retried and succeeds; task 0 is cancelled before it starts; task 1 times out.
  append(*store, run,
         {event(2, "train", S::ready, 1.0), event(2, "train", S::running, 2.0, 1),
          event(0, "prep", S::cancelled, 2.5, 0, 0, 0, "dependency 'x' failed")});
  append(*store, run,
         {event(2, "train", S::failed, 3.0, 1, 137, 0, "killed by signal 9"),
          event(1, "eval", S::running, 3.5, 1), event(2, "train", S::ready, 4.0, 1)});
  append(*store, run,
         {event(2, "train", S::running, 5.0, 2), event(1, "eval", S::timed_out, 6.0, 1, -1),
          event(2, "train", S::succeeded, 7.0, 2, 0, 0xabcdefULL)});

  auto state = store->replay(run);
  REQUIRE_MESSAGE(state.ok(), state.status().message());
  CHECK(state->info.id == run);
  REQUIRE(state->tasks.size() == 3);
  const TaskRecord& prep = state->tasks[0];
  const TaskRecord& eval = state->tasks[1];
  const TaskRecord& train = state->tasks[2];

  CHECK(prep.task == 0);
  CHECK(prep.name == "prep");
  CHECK(prep.state == S::cancelled);
  CHECK(prep.first_start == 0);
  CHECK(prep.end == 2.5);
  CHECK(prep.detail == "dependency 'x' failed");

  CHECK(eval.task == 1);
  CHECK(eval.state == S::timed_out);
  CHECK(eval.exit_code == -1);
  CHECK(eval.first_start == 3.5);
  CHECK(eval.end == 6.0);

  CHECK(train.task == 2);
  CHECK(train.name == "train");
  CHECK(train.state == S::succeeded);
  CHECK(train.attempt == 2);
  CHECK(train.exit_code == 0);
  CHECK(train.fingerprint == 0xabcdefULL);
  CHECK(train.detail.empty());  // the detail of the last event, not of the failure
  CHECK(train.first_start == 2.0);
  CHECK(train.last_start == 5.0);
  CHECK(train.end == 7.0);
}

TEST_CASE("Runtime.SqliteStore.ReplayTracksStartsAndEndOfARunningRetry") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string run = create(*store, "flow").id;
  using S = TaskState;
  append(*store, run,
         {event(5, "sim", S::running, 0.0, 1), event(5, "sim", S::failed, 4.0, 1, 1),
          event(5, "sim", S::running, 9.0, 2)});
  auto state = store->replay(run);
  REQUIRE(state.ok());
  REQUIRE(state->tasks.size() == 1);
  const TaskRecord& sim = state->tasks[0];
  CHECK(sim.state == S::running);
  CHECK(sim.attempt == 2);
  CHECK(sim.first_start == 0.0);  // a start at time 0 still counts as the first
  CHECK(sim.last_start == 9.0);
  CHECK(sim.end == 4.0);  // the last terminal event so far
  CHECK(sim.exit_code == 0);
}

TEST_CASE("Runtime.SqliteStore.ReplaySortsTasksAndSeparatesRuns") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string a = create(*store, "a").id;
  const std::string b = create(*store, "b").id;
  using S = TaskState;
  // Task ids arrive out of order, one far beyond the run's size, interleaved with another run.
  append(*store, a, {event(9, "t9", S::running, 1), event(3'000'000'000u, "huge", S::running, 1)});
  append(*store, b, {event(1, "b1", S::running, 1)});
  append(*store, a, {event(0, "t0", S::running, 2), event(4, "t4", S::succeeded, 3)});
  append(*store, b, {event(1, "b1", S::failed, 2, 1, 3)});

  auto ra = store->replay(a);
  REQUIRE(ra.ok());
  std::vector<TaskId> ids;
  for (const auto& t : ra->tasks) ids.push_back(t.task);
  CHECK(ids == std::vector<TaskId>{0, 4, 9, 3'000'000'000u});
  CHECK(ra->tasks[3].name == "huge");

  auto rb = store->replay(b);
  REQUIRE(rb.ok());
  REQUIRE(rb->tasks.size() == 1);
  CHECK(rb->tasks[0].state == S::failed);
  CHECK(rb->tasks[0].exit_code == 3);

  auto ea = store->events(a);
  REQUIRE(ea.ok());
  REQUIRE(ea->size() == 4);
  CHECK((*ea)[0].name == "t9");
  CHECK((*ea)[3].name == "t4");
  for (std::size_t i = 0; i < ea->size(); ++i)
    CHECK((*ea)[i].seq == static_cast<std::int64_t>(i + 1));
  CHECK(store->events(b)->front().seq == 1);
}

TEST_CASE("Runtime.SqliteStore.LargeBatchesKeepTheirOrder") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string run = create(*store, "flow").id;
  // Sizes around the multi-row INSERT chunk: whole chunks, chunks plus a tail, a tail alone.
  std::vector<TaskEvent> all;
  for (std::size_t size : {75u, 32u, 1u, 64u, 31u}) {
    std::vector<TaskEvent> batch;
    for (std::size_t i = 0; i < size; ++i) {
      batch.push_back(event(static_cast<TaskId>(all.size()), "t", TaskState::running,
                            static_cast<double>(all.size()), 1, 0, all.size() * 7919));
      all.push_back(batch.back());
    }
    append(*store, run, batch);
  }
  auto events = store->events(run);
  REQUIRE(events.ok());
  REQUIRE(events->size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK((*events)[i].task == all[i].task);
    CHECK((*events)[i].fingerprint == all[i].fingerprint);
    CHECK((*events)[i].seq == static_cast<std::int64_t>(i + 1));
  }
}

TEST_CASE("Runtime.SqliteStore.FingerprintsAndDetailsRoundTrip") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string run = create(*store, "flow").id;
  const std::uint64_t values[] = {0, 1, (1ULL << 63) - 1, 1ULL << 63, 0xfedcba9876543210ULL, ~0ULL};
  std::vector<TaskEvent> batch;
  for (std::uint32_t i = 0; i < std::size(values); ++i) {
    batch.push_back(event(i, "t", TaskState::succeeded, i, 3, 0, values[i],
                          i % 2 == 0 ? std::string() : "node-" + std::to_string(i) + " ✓ 'q'"));
  }
  append(*store, run, batch);

  auto events = store->events(run);
  REQUIRE(events.ok());
  REQUIRE(events->size() == std::size(values));
  for (std::size_t i = 0; i < std::size(values); ++i) {
    const EventRecord& e = (*events)[i];
    CHECK(e.fingerprint == values[i]);
    CHECK(e.task == i);
    CHECK(e.attempt == 3);
    CHECK(e.state == TaskState::succeeded);
    CHECK(e.time == static_cast<double>(i));
    CHECK(e.detail == (i % 2 == 0 ? std::string() : "node-" + std::to_string(i) + " ✓ 'q'"));
  }
  auto state = store->replay(run);
  REQUIRE(state.ok());
  for (std::size_t i = 0; i < std::size(values); ++i) {
    CHECK(state->tasks[i].fingerprint == values[i]);
  }
}

TEST_CASE("Runtime.SqliteStore.AppendToUnknownRunStoresNothing") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string run = create(*store, "flow").id;
  auto s = store->append("flow-9", std::vector<TaskEvent>{event(0, "t", TaskState::running, 1)});
  CHECK(s.code() == ErrorCode::not_found);
  CHECK(contains(s.message(), "flow-1"));
  CHECK(store->append(run, {}).ok());
  CHECK(store->events(run)->empty());
  CHECK(store->replay("flow-9").status().code() == ErrorCode::not_found);
  CHECK(store->events("flow-9").status().code() == ErrorCode::not_found);
}

TEST_CASE("Runtime.SqliteStore.SecondObjectSeesCommittedEventsWhileFirstWrites") {
  TempDir dir;
  auto writer = open_store(dir.file("journal.db"));
  auto reader = open_store(dir.file("journal.db"));
  const std::string run = create(*writer, "flow").id;
  CHECK(reader->find_run("latest")->id == run);

  std::vector<TaskEvent> batch;
  for (TaskId t = 0; t < 50; ++t) batch.push_back(event(t, "t", TaskState::running, 1));
  for (int round = 1; round <= 4; ++round) {
    append(*writer, run, batch);
    auto seen = reader->events(run);
    REQUIRE(seen.ok());
    CHECK(seen->size() == static_cast<std::size_t>(50 * round));
  }
  auto state = reader->replay(run);
  REQUIRE(state.ok());
  CHECK(state->tasks.size() == 50);
  // And the reader may write too: the writer sees its run.
  CHECK(create(*reader, "flow").id == "flow-2");
  CHECK(writer->find_run("flow-2").ok());
}

TEST_CASE("Runtime.SqliteStore.CommittedEventsSurviveAWriterThatNeverCloses") {
  TempDir dir;
  const std::string path = dir.file("journal.db");
  const std::string run = create(*open_store(path), "flow").id;
  constexpr int kBatches = 40;
  constexpr int kBatch = 100;

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // No doctest macros here: the child only reports through its exit code.
    auto store = open_sqlite_store(path);
    if (!store.ok()) _exit(2);
    std::vector<TaskEvent> batch(kBatch);
    for (int b = 0; b < kBatches; ++b) {
      for (int i = 0; i < kBatch; ++i) {
        batch[i] = event(static_cast<TaskId>(b * kBatch + i), "t", TaskState::succeeded, b);
      }
      if (!(*store)->append(run, batch).ok()) _exit(3);
    }
    _exit(0);  // no destructor, no close, no checkpoint
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  auto state = open_store(path)->replay(run);
  REQUIRE(state.ok());
  CHECK(state->tasks.size() == kBatches * kBatch);
  CHECK(state->tasks.back().task == kBatches * kBatch - 1);
}

TEST_CASE("Runtime.SqliteStore.KilledWriterLosesNoAcknowledgedBatchAndNoHalfBatch") {
  TempDir dir;
  const std::string path = dir.file("journal.db");
  const std::string run = create(*open_store(path), "flow").id;
  constexpr int kBatch = 64;
  int ack[2];
  REQUIRE(pipe(ack) == 0);

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(ack[0]);
    auto store = open_sqlite_store(path);
    if (!store.ok()) _exit(2);
    std::vector<TaskEvent> batch(kBatch);
    for (int b = 0;; ++b) {
      for (int i = 0; i < kBatch; ++i) {
        batch[i] = event(static_cast<TaskId>(b * kBatch + i), "t", TaskState::running, b);
      }
      if (!(*store)->append(run, batch).ok()) _exit(3);
      const int done = b + 1;
      if (write(ack[1], &done, sizeof done) != sizeof done) _exit(4);
    }
  }
  close(ack[1]);
  int acknowledged = 0;
  for (int i = 0; i < 20; ++i) REQUIRE(read(ack[0], &acknowledged, sizeof acknowledged) > 0);
  kill(child, SIGKILL);  // somewhere in the middle of a later batch
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  close(ack[0]);
  CHECK(WIFSIGNALED(status));

  auto events = open_store(path)->events(run);
  REQUIRE(events.ok());
  CHECK(events->size() >= static_cast<std::size_t>(acknowledged * kBatch));
  CHECK(events->size() % kBatch == 0);
}

TEST_CASE("Runtime.SqliteStore.ProcessesCreatingRunsAtOnceGetDistinctIds") {
  TempDir dir;
  const std::string path = dir.file("journal.db");
  open_store(path);  // the schema exists before the race on ids starts
  constexpr int kChildren = 3;
  constexpr int kRuns = 15;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      auto store = open_sqlite_store(path);
      if (!store.ok()) _exit(2);
      for (int i = 0; i < kRuns; ++i) {
        if (!(*store)->create_run(new_run("race")).ok()) _exit(3);
      }
      _exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto runs = open_store(path)->list_runs();
  REQUIRE(runs.ok());
  std::set<std::string> ids;
  for (const auto& r : *runs) ids.insert(r.id);
  CHECK(ids.size() == kChildren * kRuns);
  for (int n = 1; n <= kChildren * kRuns; ++n) CHECK(ids.count("race-" + std::to_string(n)) == 1);
}

TEST_CASE("Runtime.SqliteStore.RefusesAFileThatIsNotAJournal") {
  TempDir dir;
  SUBCASE("garbage bytes") {
    const std::string path = dir.file("notes.txt");
    std::ofstream(path) << "these are my notes, not a database\n" << std::string(5000, 'x');
    const auto size = fs::file_size(path);
    auto store = open_sqlite_store(path);
    REQUIRE(!store.ok());
    CHECK(store.status().code() == ErrorCode::io_error);
    CHECK(contains(store.status().message(), path + " is not a Chorus journal ("));
    // The file is left as it was.
    CHECK(fs::file_size(path) == size);
  }
  SUBCASE("another application's database") {
    const std::string path = dir.file("other.db");
    raw_exec(path, "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)");
    auto store = open_sqlite_store(path);
    REQUIRE(!store.ok());
    CHECK(store.status().message() ==
          path + " is not a Chorus journal (an SQLite database of another application)");
  }
  SUBCASE("a newer schema") {
    const std::string path = dir.file("future.db");
    open_store(path);
    raw_exec(path, "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
    auto store = open_sqlite_store(path);
    REQUIRE(!store.ok());
    CHECK(contains(store.status().message(), path + " is not a Chorus journal (schema version 7"));
  }
}

TEST_CASE("Runtime.SqliteStore.MissingDirectoryIsAClearError") {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/journal.db");
  auto store = open_sqlite_store(path);
  REQUIRE(!store.ok());
  CHECK(store.status().code() == ErrorCode::io_error);
  CHECK(contains(store.status().message(), "cannot open journal " + path));
  CHECK(contains(store.status().message(), "does not exist"));
  CHECK(!fs::exists(dir.file("no")));

  fs::create_directory(dir.file("a_directory"));
  auto on_dir = open_sqlite_store(dir.file("a_directory"));
  REQUIRE(!on_dir.ok());
  CHECK(on_dir.status().code() == ErrorCode::io_error);
  CHECK(contains(on_dir.status().message(), "cannot open journal " + dir.file("a_directory")));
}

TEST_CASE("Runtime.SqliteStore.AttemptKindCoresAndNodeRoundTrip") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  const std::string run = create(*store, "flow").id;
  const std::string nodes[] = {"node-a", "", "gpu node 7 ✓"};
  const TaskKind kinds[] = {TaskKind::executable, TaskKind::mpi, TaskKind::function,
                            TaskKind::service};
  // 40 events: more than one 32-row INSERT, so both insert paths carry the new columns.
  std::vector<TaskEvent> batch;
  for (std::uint32_t i = 0; i < 40; ++i) {
    TaskEvent e = event(i, "t", TaskState::running, i);
    e.kind = kinds[i % 4];
    e.cores = static_cast<int>(i % 5) * 3;
    e.node = nodes[i % 3];
    batch.push_back(e);
  }
  append(*store, run, batch);
  auto events = store->events(run);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 40);
  for (std::uint32_t i = 0; i < 40; ++i) {
    const EventRecord& e = (*events)[i];
    CHECK(e.kind == kinds[i % 4]);
    CHECK(e.cores == static_cast<int>(i % 5) * 3);
    CHECK(e.node == nodes[i % 3]);
  }
}

TEST_CASE("Runtime.SqliteStore.RunNodesRoundTripThroughCreateAndUpdate") {
  TempDir dir;
  auto store = open_store(dir.file("journal.db"));
  RunInfo info = new_run("flow");
  info.nodes = {NodeInfo{"node01", Resources{64, 256'000, 4}},
                NodeInfo{"odd \\name\nwith newline", Resources{2, 0, 0}}};
  auto created = store->create_run(info);
  REQUIRE(created.ok());
  auto found = store->find_run(created->id);
  REQUIRE(found.ok());
  REQUIRE(found->nodes.size() == 2);
  CHECK(found->nodes[0].name == "node01");
  CHECK(found->nodes[0].capacity == Resources{64, 256'000, 4});
  CHECK(found->nodes[1].name == "odd \\name\nwith newline");
  CHECK(found->nodes[1].capacity == Resources{2, 0, 0});

  found->nodes.push_back(NodeInfo{"node03", Resources{8, 1024, 0}});
  REQUIRE(store->update_run(*found).ok());
  auto store2 = open_store(dir.file("journal.db"));
  auto again = store2->find_run(created->id);
  REQUIRE(again.ok());
  REQUIRE(again->nodes.size() == 3);
  CHECK(again->nodes[2].name == "node03");
  CHECK(again->nodes[2].capacity.cores == 8);

  // A run registered without nodes reads back without nodes.
  auto bare = store2->create_run(new_run("bare"));
  REQUIRE(bare.ok());
  auto bare_found = store2->find_run(bare->id);
  REQUIRE(bare_found.ok());
  CHECK(bare_found->nodes.empty());
}

TEST_CASE("Runtime.SqliteStore.MigratesAVersionOneJournalOnOpen") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  // The schema exactly as version 1 wrote it, with one run and its events.
  raw_exec(path, R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE runs(
  id TEXT PRIMARY KEY, key INTEGER NOT NULL UNIQUE, stem TEXT NOT NULL, n INTEGER NOT NULL,
  workflow_name TEXT NOT NULL, workflow_path TEXT NOT NULL, workdir TEXT NOT NULL,
  status TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
  total_tasks INTEGER NOT NULL, coordinator_pid INTEGER NOT NULL, host TEXT NOT NULL,
  UNIQUE(stem, n));
CREATE INDEX runs_by_path ON runs(workflow_path, created);
CREATE TABLE events(
  seq INTEGER PRIMARY KEY, run INTEGER NOT NULL, task INTEGER NOT NULL, name TEXT NOT NULL,
  attempt INTEGER NOT NULL, state TEXT NOT NULL, time REAL NOT NULL, exit_code INTEGER NOT NULL,
  fingerprint INTEGER NOT NULL, detail TEXT);
INSERT INTO meta VALUES('schema_version', '1');
INSERT INTO runs VALUES('old-1', 1, 'old', 1, 'old', '/w/old.yaml', '/w', 'succeeded', 10, 20,
                        1, 0, 'host1');
INSERT INTO events VALUES((1 << 40) | 1, 1, 0, 'a', 1, 'running', 11, 0, 5, NULL);
INSERT INTO events VALUES((1 << 40) | 2, 1, 0, 'a', 1, 'succeeded', 12, 0, 5, NULL);
PRAGMA application_id = 1128813139;
)sql");

  auto store = open_store(path);
  auto run = store->find_run("old-1");
  REQUIRE_MESSAGE(run.ok(), run.status().message());
  CHECK(run->workflow_path == "/w/old.yaml");
  CHECK(run->nodes.empty());
  auto events = store->events("old-1");
  REQUIRE(events.ok());
  REQUIRE(events->size() == 2);
  CHECK((*events)[0].state == TaskState::running);
  CHECK((*events)[0].kind == TaskKind::executable);
  CHECK((*events)[0].cores == 1);
  CHECK((*events)[0].node.empty());
  CHECK((*events)[0].fingerprint == 5);

  // The upgraded file takes new events, new runs and node lists.
  TaskEvent e = event(1, "b", TaskState::running, 13);
  e.kind = TaskKind::mpi;
  e.cores = 8;
  e.node = "node02";
  append(*store, "old-1", {e});
  run->nodes = {NodeInfo{"node02", Resources{16, 0, 0}}};
  REQUIRE(store->update_run(*run).ok());
  CHECK(create(*store, "old").id == "old-2");

  // Reopening finds version 2 (no second migration) and everything written.
  store.reset();
  auto reopened = open_store(path);
  auto after = reopened->events("old-1");
  REQUIRE(after.ok());
  REQUIRE(after->size() == 3);
  CHECK((*after)[2].kind == TaskKind::mpi);
  CHECK((*after)[2].cores == 8);
  CHECK((*after)[2].node == "node02");
  auto run_after = reopened->find_run("old-1");
  REQUIRE(run_after.ok());
  REQUIRE(run_after->nodes.size() == 1);
  CHECK(run_after->nodes[0].capacity.cores == 16);
  auto state = reopened->replay("old-1");
  REQUIRE(state.ok());
  CHECK(state->tasks.size() == 2);

  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &stmt,
                             nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))) == "4");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  // Upgraded runs have no token or coordinator identity; new ones get a token.
  CHECK(run_after->token.empty());
  CHECK(run_after->coordinator_start == 0);
  CHECK(reopened->find_run("old-2")->token.size() == 32);
}

TEST_CASE("Runtime.SqliteStore.TokensAndCoordinatorIdentityRoundTrip") {
  TempDir dir;
  auto store = open_store(dir.file("chorus.db"));
  RunInfo a = create(*store, "flow");
  RunInfo b = create(*store, "flow");
  CHECK(a.token.size() == 32);
  CHECK(a.token.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a.token != b.token);
  a.coordinator_start = 123456789012ULL;
  a.boot_id = "6f1c2a3e-0000-4000-8000-000000000001";
  REQUIRE(store->update_run(a).ok());
  auto back = store->find_run(a.id);
  REQUIRE(back.ok());
  CHECK(back->token == a.token);
  CHECK(back->coordinator_start == 123456789012ULL);
  CHECK(back->boot_id == a.boot_id);
}

TEST_CASE("Runtime.SqliteStore.TaskGroupsRideWithEventsAndAreForgotten") {
  TempDir dir;
  auto store = open_store(dir.file("chorus.db"));
  RunInfo a = create(*store, "flow");
  RunInfo b = create(*store, "other");
  const std::vector<TaskEvent> events = {event(0, "x", TaskState::running, 1)};
  const std::vector<TaskGroup> groups = {{0, 1, 4001, 777}, {1, 1, 4002, 778}};
  REQUIRE(store->append(a.id, events, groups).ok());
  // Groups alone (no events), and the same attempt again replaces its row.
  const std::vector<TaskGroup> again = {{1, 1, 4003, 779}};
  REQUIRE(store->append(a.id, {}, again).ok());
  const std::vector<TaskGroup> other = {{0, 1, 5001, 1}};
  REQUIRE(store->append(b.id, {}, other).ok());

  auto got = store->task_groups(a.id);
  REQUIRE(got.ok());
  REQUIRE(got->size() == 2);
  std::set<std::pair<std::int64_t, std::uint64_t>> seen;
  for (const auto& g : *got) seen.insert({g.pgid, g.start_ticks});
  CHECK(seen == std::set<std::pair<std::int64_t, std::uint64_t>>{{4001, 777}, {4003, 779}});
  CHECK(store->events(a.id)->size() == 1);

  REQUIRE(store->forget_task_groups(a.id).ok());
  CHECK(store->task_groups(a.id)->empty());
  CHECK(store->task_groups(b.id)->size() == 1);  // another run's rows stay
}

TEST_CASE("Runtime.SqliteStore.IntegrityCheckPassesASoundJournalAndCheckpointEmptiesTheLog") {
  TempDir dir;
  const std::string path = dir.file("chorus.db");
  auto store = open_store(path);
  RunInfo a = create(*store, "flow");
  append(*store, a.id, {event(0, "x", TaskState::running, 1)});
  CHECK(store->check_integrity().ok());
  CHECK(fs::file_size(path + "-wal") > 0);
  REQUIRE(store->checkpoint().ok());
  CHECK(fs::file_size(path + "-wal") == 0);
}

namespace {

std::string schema_version_of(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &stmt,
                             nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  std::string v(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

}  // namespace

TEST_CASE("Runtime.SqliteStore.PlacementsRideWithEventsAndRoundTrip") {
  TempDir dir;
  auto store = open_store(dir.file("chorus.db"));
  const RunInfo run = create(*store, "flow");
  const RunInfo other = create(*store, "other");
  std::vector<float> f1(17), f2(17);
  for (int i = 0; i < 17; ++i) {
    f1[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f;
    f2[static_cast<std::size_t>(i)] = static_cast<float>(-i);
  }
  f2[3] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<PlacementCandidate> cands = {
      {"node-b", 4.25, f1}, {"node-a", 9.5, f2}, {"node-c", std::nan(""), {}}};
  std::vector<TaskEvent> events = {event(1, "fetch", TaskState::running, 10, 2),
                                   event(0, "gen", TaskState::running, 10, 1)};
  const std::vector<PlacementRecord> records = {
      {1, 2, "network-aware", "analytic (no model)", cands},
      {0, 1, "network-aware", "model /m.json", std::span(cands).first(1)}};
  REQUIRE(store->append(run.id, events, {}, records).ok());
  auto rows = store->placements(run.id);
  REQUIRE_MESSAGE(rows.ok(), rows.status().message());
  REQUIRE(rows->size() == 2);
  const PlacementRow& gen = (*rows)[0];  // (task, attempt) order
  CHECK(gen.task == 0);
  CHECK(gen.name == "gen");
  CHECK(gen.basis == "model /m.json");
  REQUIRE(gen.candidates.size() == 1);
  const PlacementRow& fetch = (*rows)[1];
  CHECK(fetch.task == 1);
  CHECK(fetch.attempt == 2);
  CHECK(fetch.name == "fetch");
  CHECK(fetch.policy == "network-aware");
  CHECK(fetch.basis == "analytic (no model)");
  REQUIRE(fetch.candidates.size() == 3);
  CHECK(fetch.candidates[0].node == "node-b");
  CHECK(fetch.candidates[0].predicted_s == 4.25);
  CHECK(fetch.candidates[0].features == f1);
  CHECK(fetch.candidates[1].features[2] == -2.0f);
  CHECK(std::isnan(fetch.candidates[1].features[3]));
  CHECK(std::isnan(fetch.candidates[2].predicted_s));
  CHECK(fetch.candidates[2].features.empty());
  CHECK(store->placements(other.id)->empty());
  // The events went in the same transaction.
  CHECK(store->events(run.id)->size() == 2);
  // A record for an unknown run stores nothing, events included.
  CHECK_FALSE(store->append("nope-1", events, {}, records).ok());
  CHECK(store->placements(run.id)->size() == 2);
  // A second object reads the same.
  auto second = open_store(dir.file("chorus.db"));
  CHECK(second->placements(run.id)->size() == 2);
}

TEST_CASE("Runtime.SqliteStore.MigratesAVersionThreeJournalOnOpen") {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  {
    auto store = open_store(path);
    const RunInfo run = create(*store, "old");
    append(*store, run.id,
           {event(0, "a", TaskState::running, 1), event(0, "a", TaskState::succeeded, 2)});
  }
  // Version 3 is this schema without the placements table.
  raw_exec(path,
           "DROP TABLE placements; UPDATE meta SET value = '3' WHERE key = 'schema_version';");
  CHECK(schema_version_of(path) == "3");
  auto store = open_store(path);
  CHECK(schema_version_of(path) == "4");
  auto events = store->events("old-1");
  REQUIRE(events.ok());
  CHECK(events->size() == 2);
  CHECK(store->placements("old-1")->empty());
  const std::vector<PlacementCandidate> cands = {{"n1", 1.5, {}}};
  const PlacementRecord rec{1, 1, "network-aware", "analytic (no model)", cands};
  std::vector<TaskEvent> more = {event(1, "b", TaskState::running, 3)};
  REQUIRE(store->append("old-1", more, {}, std::span(&rec, 1)).ok());
  auto rows = store->placements("old-1");
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].name == "b");
  CHECK(store->replay("old-1")->tasks.size() == 2);
}
