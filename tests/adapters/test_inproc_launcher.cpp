#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "adapters/inproc/inproc_launcher.hpp"
#include "support/launcher_harness.hpp"

using namespace chorus;
using namespace chorus::test;
using namespace std::chrono_literals;

namespace {

TaskSpec fn_task(TaskId id, TaskFunction fn, Duration timeout = Duration::zero()) {
  TaskSpec spec;
  spec.id = id;
  spec.name = "f" + std::to_string(id);
  spec.kind = TaskKind::function;
  spec.fn = std::move(fn);
  spec.timeout = timeout;
  return spec;
}

LaunchRequest request_for(const TaskSpec& spec, std::uint32_t attempt = 1) {
  LaunchRequest r;
  r.spec = &spec;
  r.attempt = attempt;
  return r;
}

// A gate a function can block on until the test opens it, and which tells when it was reached.
class Gate {
 public:
  Status pass() {
    std::unique_lock lock(mu_);
    reached_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
    return Status::ok_status();
  }
  bool wait_reached() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [this] { return reached_; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool reached_ = false;
  bool open_ = false;
};

const StateUpdate* find_task(const std::vector<StateUpdate>& updates, TaskId id) {
  for (const StateUpdate& u : updates) {
    if (u.task == id) return &u;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("Adapters.Inproc.RunsFunctionsAndReportsResults") {
  InprocLauncher launcher(2);
  CHECK(launcher.threads() == 2);
  std::atomic<int> ran[10] = {};
  std::vector<TaskSpec> specs;
  for (TaskId i = 0; i < 10; ++i) {
    specs.push_back(fn_task(i, [&ran, i] {
      ++ran[i];
      return Status::ok_status();
    }));
  }
  for (const TaskSpec& s : specs) REQUIRE(launcher.launch(request_for(s, 3)).ok());
  auto updates = drive(launcher, 10);
  REQUIRE(updates.size() == 10);
  for (TaskId i = 0; i < 10; ++i) {
    const StateUpdate* u = find_task(updates, i);
    REQUIRE(u != nullptr);
    CHECK(u->succeeded());
    CHECK(u->attempt == 3);
    CHECK(u->end_time > 0);
    CHECK(ran[i] == 1);
  }
  CHECK(launcher.in_flight() == 0);
}

TEST_CASE("Adapters.Inproc.FailedStatusFailsTask") {
  InprocLauncher launcher(1);
  TaskSpec spec = fn_task(0, [] { return invalid_argument("input.csv has no header"); });
  TaskSpec bare = fn_task(1, [] { return Status{ErrorCode::unavailable, ""}; });
  REQUIRE(launcher.launch(request_for(spec)).ok());
  REQUIRE(launcher.launch(request_for(bare)).ok());
  auto updates = drive(launcher, 2);
  REQUIRE(updates.size() == 2);
  const StateUpdate* u = find_task(updates, 0);
  REQUIRE(u != nullptr);
  CHECK(u->kind == UpdateKind::exited);
  CHECK(u->exit_code == 1);
  CHECK(!u->succeeded());
  CHECK(u->message == "input.csv has no header");
  const StateUpdate* b = find_task(updates, 1);
  REQUIRE(b != nullptr);
  CHECK(b->exit_code == 1);
  CHECK(!b->message.empty());  // falls back to the error code's name
}

TEST_CASE("Adapters.Inproc.ExceptionFailsTaskWithoutCrossingThreads") {
  InprocLauncher launcher(2);
  TaskSpec std_ex = fn_task(0, []() -> Status { throw std::runtime_error("boom"); });
  TaskSpec other = fn_task(1, []() -> Status { throw 42; });
  REQUIRE(launcher.launch(request_for(std_ex)).ok());
  REQUIRE(launcher.launch(request_for(other)).ok());
  auto updates = drive(launcher, 2);
  REQUIRE(updates.size() == 2);
  const StateUpdate* a = find_task(updates, 0);
  const StateUpdate* b = find_task(updates, 1);
  REQUIRE((a != nullptr && b != nullptr));
  CHECK(a->exit_code == 1);
  CHECK(a->message == "exception: boom");
  CHECK(b->exit_code == 1);
  CHECK(b->message.rfind("exception: ", 0) == 0);
}

TEST_CASE("Adapters.Inproc.RejectsSpecWithoutFunction") {
  InprocLauncher launcher(1);
  TaskSpec spec;
  spec.name = "nofn";
  auto r = launcher.launch(request_for(spec));
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  CHECK(r.status().message().find("'nofn' has no function") != std::string::npos);
  CHECK(launcher.in_flight() == 0);
}

TEST_CASE("Adapters.Inproc.CancelRemovesQueuedWork") {
  InprocLauncher launcher(1);
  Gate gate;
  std::atomic<int> ran[6] = {};
  std::vector<TaskSpec> specs;
  specs.push_back(fn_task(0, [&] { return gate.pass(); }));
  for (TaskId i = 1; i < 6; ++i) {
    specs.push_back(fn_task(i, [&ran, i] {
      ++ran[i];
      return Status::ok_status();
    }));
  }
  std::vector<LaunchHandle> handles;
  auto h0 = launcher.launch(request_for(specs[0]));
  REQUIRE(h0.ok());
  handles.push_back(*h0);
  // The only worker is now blocked in task 0, so the next launches stay queued.
  REQUIRE(gate.wait_reached());
  for (TaskId i = 1; i < 6; ++i) {
    auto h = launcher.launch(request_for(specs[i]));
    REQUIRE(h.ok());
    handles.push_back(*h);
  }
  CHECK(launcher.cancel(handles[2]).ok());
  CHECK(launcher.cancel(handles[4]).ok());
  CHECK(launcher.cancel(handles[4]).ok());

  // Reported at once, while the worker is still blocked.
  auto cancelled = drive(launcher, 2);
  REQUIRE(cancelled.size() == 2);
  for (const StateUpdate& u : cancelled) {
    CHECK(u.kind == UpdateKind::cancelled);
    CHECK(u.message == "cancelled before it started");
    CHECK((u.task == 2 || u.task == 4));
  }
  CHECK(cancelled[0].task != cancelled[1].task);
  CHECK(launcher.in_flight() == 4);

  gate.open();
  auto rest = drive(launcher, 4);
  REQUIRE(rest.size() == 4);
  for (const StateUpdate& u : rest) {
    CHECK(u.succeeded());
    CHECK((u.task != 2 && u.task != 4));
  }
  CHECK(ran[2] == 0);
  CHECK(ran[4] == 0);
  CHECK(ran[1] == 1);
  CHECK(ran[3] == 1);
  CHECK(ran[5] == 1);
  CHECK(launcher.cancel(handles[2]).ok());  // finished: not an error, no new update
  std::vector<StateUpdate> more;
  launcher.poll(more);
  CHECK(more.empty());
  CHECK(launcher.in_flight() == 0);
}

TEST_CASE("Adapters.Inproc.CancelOfRunningFunctionReportedWhenItReturns") {
  InprocLauncher launcher(1);
  Gate gate;
  TaskSpec spec = fn_task(0, [&] { return gate.pass(); });
  auto h = launcher.launch(request_for(spec));
  REQUIRE(h.ok());
  REQUIRE(gate.wait_reached());
  CHECK(launcher.cancel(*h).ok());
  CHECK(launcher.cancel(*h).ok());
  std::vector<StateUpdate> none;
  launcher.poll(none);
  CHECK(none.empty());  // it cannot be interrupted
  gate.open();
  auto updates = drive(launcher, 1);
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].kind == UpdateKind::cancelled);
  CHECK(updates[0].message.find("cannot be interrupted") != std::string::npos);
  CHECK(launcher.in_flight() == 0);
}

TEST_CASE("Adapters.Inproc.TimeoutReportedWhenFunctionReturns") {
  InprocLauncher launcher(2);
  TaskSpec slow = fn_task(
      0,
      [] {
        std::this_thread::sleep_for(30ms);
        return Status::ok_status();
      },
      1ms);
  TaskSpec quick = fn_task(
      1, [] { return Status::ok_status(); }, 1h);
  REQUIRE(launcher.launch(request_for(slow)).ok());
  REQUIRE(launcher.launch(request_for(quick)).ok());
  auto updates = drive(launcher, 2);
  REQUIRE(updates.size() == 2);
  const StateUpdate* s = find_task(updates, 0);
  const StateUpdate* q = find_task(updates, 1);
  REQUIRE((s != nullptr && q != nullptr));
  CHECK(s->kind == UpdateKind::timed_out);
  CHECK(s->message.rfind("timed out after 1ms", 0) == 0);
  CHECK(q->succeeded());
}

TEST_CASE("Adapters.Inproc.WaitFdSignalsOnlyWhenThereIsSomethingToPoll") {
  InprocLauncher launcher(1);
  CHECK(launcher.wait_fd() >= 0);
  CHECK(!wait_fd_ready(launcher));
  TaskSpec spec = fn_task(0, [] { return Status::ok_status(); });
  REQUIRE(launcher.launch(request_for(spec)).ok());
  pollfd pfd{launcher.wait_fd(), POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 10000) == 1);
  std::vector<StateUpdate> out;
  launcher.poll(out);
  CHECK(out.size() == 1);
  CHECK(!wait_fd_ready(launcher));
}

TEST_CASE("Adapters.Inproc.DestructorLetsRunningFunctionFinish") {
  std::atomic<bool> finished{false};
  Gate gate;
  TaskSpec running = fn_task(0, [&] {
    Status s = gate.pass();
    std::this_thread::sleep_for(20ms);
    finished = true;
    return s;
  });
  TaskSpec queued = fn_task(1, [] { return Status::ok_status(); });
  {
    InprocLauncher launcher(1);
    REQUIRE(launcher.launch(request_for(running)).ok());
    REQUIRE(gate.wait_reached());
    REQUIRE(launcher.launch(request_for(queued)).ok());
    gate.open();
  }
  CHECK(finished);
}

TEST_CASE("Adapters.Inproc.HundredThousandTasksEachReportedOnce") {
  constexpr TaskId kTasks = 100000;
  InprocLauncher launcher(2);
  std::atomic<std::uint64_t> calls{0};
  std::vector<TaskSpec> specs(kTasks);
  for (TaskId i = 0; i < kTasks; ++i) {
    specs[i].id = i;
    specs[i].kind = TaskKind::function;
    specs[i].fn = [&calls] {
      calls.fetch_add(1, std::memory_order_relaxed);
      return Status::ok_status();
    };
  }
  std::vector<int> seen(kTasks, 0);
  std::vector<StateUpdate> updates;
  std::size_t received = 0;
  LaunchRequest r;
  // Launch and poll interleaved, as the coordinator does.
  for (TaskId i = 0; i < kTasks; ++i) {
    r.spec = &specs[i];
    REQUIRE(launcher.launch(r).ok());
    if (i % 1000 == 999) launcher.poll(updates);
  }
  TimePoint end = Clock::now() + 120s;
  while (launcher.in_flight() > 0 && Clock::now() < end) {
    pollfd pfd{launcher.wait_fd(), POLLIN, 0};
    ::poll(&pfd, 1, 100);
    launcher.poll(updates);
  }
  for (const StateUpdate& u : updates) {
    REQUIRE(u.task < kTasks);
    ++seen[u.task];
    if (!u.succeeded()) FAIL("task ", u.task, " failed: ", u.message);
    ++received;
  }
  CHECK(received == kTasks);
  CHECK(std::count(seen.begin(), seen.end(), 1) == kTasks);
  CHECK(calls == kTasks);
  CHECK(launcher.in_flight() == 0);
}
