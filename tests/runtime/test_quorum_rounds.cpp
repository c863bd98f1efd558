// Quorum rounds through the coordinator, step by step (scripted launcher, manual clock,
// in-memory journal): a repeat group's sweep closes on the policy's word, the unfinished members
// are dropped (stopped, journaled as dropped by quorum, not failures), the tasks after the sweep
// run, the round's record is written, and a resumed run neither reruns the finished members nor
// resurrects the dropped ones.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "api/tasks.hpp"
#include "runtime/coordinator.hpp"
#include "runtime/quorum_record.hpp"
#include "runtime/repeat_driver.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "support/memory_journal.hpp"
#include "support/process.hpp"
#include "support/scripted_launcher.hpp"

using namespace chorus;
using chorus::test::ManualClock;
using chorus::test::MemoryJournal;
using chorus::test::ScriptedLauncher;
using chorus::test::TempDir;

namespace {

using Lines = std::vector<std::string>;

std::unique_ptr<QuorumPolicy> static_quorum(int k) {
  PolicyOptions options;
  options.entries.push_back(
      {"k", {}, OptionValue{OptionValue::Kind::scalar, std::to_string(k), {}, {}}, {}});
  auto made = PolicyRegistry::with_builtins().make_quorum("static", options);
  REQUIRE_MESSAGE(made.ok(), made.status().message());
  return std::move(*made);
}

std::string sim_name(int round, int i) {
  return "sim[round=" + std::to_string(round) + ",i=" + std::to_string(i) + "]";
}

// A group "ens" of `rounds` rounds: a sweep sim[round=R,i=0..4] with a quorum, then
// merge[round=R] after all of it; the gate "ens" after every task of the round.
WorkflowGraph ensemble(const std::string& dir, int rounds) {
  WorkflowGraph g;
  g.name = "quorum";
  g.workdir = dir;
  std::vector<TaskId> round1;
  for (int i = 0; i < 5; ++i) round1.push_back(g.add(shell_task(sim_name(1, i), "true")));
  TaskSpec merge = shell_task("merge[round=1]", "true", round1);
  round1.push_back(g.add(merge));
  TaskSpec gate = function_task("ens", [] {});
  gate.held = true;
  gate.after = round1;
  RepeatGroup group;
  group.name = "ens";
  group.gate = g.add(gate);
  group.max_rounds = rounds;
  group.first_round = round1;
  group.expand = [](int round) -> Result<RoundPlan> {
    RoundPlan plan;
    for (int i = 0; i < 5; ++i) {
      plan.tasks.push_back(shell_task(sim_name(round, i), "true"));
      plan.local_after.push_back({});
    }
    plan.tasks.push_back(shell_task("merge[round=" + std::to_string(round) + "]", "true"));
    plan.local_after.push_back({0, 1, 2, 3, 4});
    return plan;
  };
  group.until = [](int) -> Result<bool> { return false; };
  QuorumSweep sweep;
  sweep.name = "sim";
  sweep.choice.policy = "static";
  sweep.choice.n = 5;
  sweep.members = {0, 1, 2, 3, 4};
  sweep.file = dir + "/quorum/ens/round-{round}.json";
  group.quorum = sweep;
  g.repeats.push_back(std::move(group));
  return g;
}

// Closes its round `after` seconds after it began, with whatever arrived by then (a deadline
// policy, the shape of a grace window): what exercises the coordinator's turn handler.
class DeadlineQuorum final : public QuorumPolicy {
 public:
  explicit DeadlineQuorum(double after) : after_(after) {}
  void begin(const RoundStart& round) override { deadline_ = round.time + after_; }
  QuorumVerdict on_arrival(const Arrival&) override { return QuorumVerdict::wait; }
  double deadline() const override { return deadline_; }
  QuorumVerdict on_tick(double now) override {
    ticks.push_back(now);
    return now >= deadline_ ? QuorumVerdict::close : QuorumVerdict::wait;
  }
  void end(const RoundEnd& round) override { used.push_back(round.used); }

  std::vector<double> ticks;
  std::vector<int> used;

 private:
  double after_;
  double deadline_ = kNever;
};

struct Session {
  ManualClock clock;
  ScriptedLauncher launcher{clock};
  FifoQueue queue;
  FirstFit placement;
  CancelToken cancel;
  std::vector<NodeInfo> nodes{NodeInfo{"n1", {8, 0, 0}}};

  std::unique_ptr<QuorumPolicy> policy;  // static k = 3 when not set

  Result<RunSummary> go(const WorkflowGraph& g, MemoryJournal& journal, const std::string& run,
                        const RunState* previous) {
    std::vector<std::unique_ptr<QuorumPolicy>> policies;
    policies.push_back(policy ? std::move(policy) : static_quorum(3));
    RepeatDriver driver(g, std::move(policies));
    CoordinatorOptions options;
    options.clock = &clock;
    options.log_dir = "/nonexistent/logs";
    options.on_task_done = [&](const TaskSpec& t, TaskState s, TaskSubmitter& sub) {
      driver.on_task_done(t, s, sub);
    };
    options.on_turn = [&](TimePoint now, TaskSubmitter& sub) { return driver.on_turn(now, sub); };
    LauncherTable launchers{};
    launchers.fill(&launcher);
    Coordinator c(g, journal, run, nodes, queue, placement, launchers, options, &cancel);
    auto result = c.run(previous);
    CHECK_MESSAGE(clock.script_done(), "the run ended before the script did");
    return result;
  }

  Lines launched() const {
    Lines out;
    for (const auto& l : launcher.launches) out.push_back(l.name);
    return out;
  }
};

Lines history(MemoryJournal& journal, const std::string& run, const std::string& task) {
  Lines out;
  const std::vector<EventRecord> events = journal.events(run).value();
  for (const auto& e : events) {
    if (e.name != task) continue;
    std::string line = std::string(to_string(e.state)) + ":" + std::to_string(e.attempt);
    if (!e.detail.empty()) line += ":" + e.detail;
    out.push_back(line);
  }
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string new_run(MemoryJournal& journal) {
  RunInfo info;
  info.workflow_name = "quorum";
  return journal.create_run(info).value().id;
}

}  // namespace

TEST_CASE("Runtime.QuorumRounds.StaticClosesAfterKAndDropsTheRest") {
  TempDir dir;
  MemoryJournal journal;
  const std::string run = new_run(journal);
  const WorkflowGraph g = ensemble(dir.path(), 1);
  Session s;
  s.clock.then([&] {
    for (int i = 0; i < 5; ++i) REQUIRE(s.launcher.running(sim_name(1, i)));
    s.clock.advance(std::chrono::seconds(1));
    s.launcher.exit(sim_name(1, 2));
    s.launcher.exit(sim_name(1, 0));
  });
  s.clock.then([&] {
    CHECK(s.launcher.cancels.empty());  // two of the three: the round waits
    CHECK_FALSE(s.launcher.running("merge[round=1]"));
    s.clock.advance(std::chrono::seconds(2));
    s.launcher.exit(sim_name(1, 4));
  });
  s.clock.then_when([&] { return s.launcher.running("merge[round=1]"); },
                    [&] {
                      // The third closed the round: the other two were stopped, merge started.
                      CHECK(s.launcher.cancels == Lines{sim_name(1, 1), sim_name(1, 3)});
                      s.launcher.exit("merge[round=1]");
                    });
  s.clock.then_when([&] { return s.launcher.running("ens"); }, [&] { s.launcher.exit("ens"); });
  auto summary = s.go(g, journal, run, nullptr);
  REQUIRE_MESSAGE(summary.ok(), summary.status().message());
  CHECK(summary->status == RunStatus::succeeded);
  CHECK(summary->failures.empty());
  CHECK(summary->progress.dropped == 2);
  CHECK(summary->progress.failed == 0);
  CHECK(history(journal, run, sim_name(1, 1)) ==
        Lines{"running:1", "cancelled:1:dropped by quorum: round 1 of 'ens' closed with 3 of 5"});
  CHECK(history(journal, run, sim_name(1, 0)) == Lines{"running:1", "succeeded:1"});
  CHECK(history(journal, run, "merge[round=1]") == Lines{"running:1", "succeeded:1"});
  const std::string record = read(dir.path() + "/quorum/ens/round-1.json");
  CHECK(has(record, "\"round\": 1"));
  CHECK(has(record, "\"n\": 5"));
  CHECK(has(record, "\"k\": 3"));
  CHECK(has(record, "\"used\": 3"));
  CHECK(has(record, "\"members_used\": [\"" + sim_name(1, 2) + "\", \"" + sim_name(1, 0) +
                        "\", \"" + sim_name(1, 4) + "\"]"));
  CHECK(
      has(record, "\"members_dropped\": [\"" + sim_name(1, 1) + "\", \"" + sim_name(1, 3) + "\"]"));
  CHECK(has(record, "\"closed_after_s\": 3.000000"));
}

TEST_CASE("Runtime.QuorumRounds.EachRoundClosesOnItsOwn") {
  TempDir dir;
  MemoryJournal journal;
  const std::string run = new_run(journal);
  const WorkflowGraph g = ensemble(dir.path(), 2);
  Session s;
  for (int round = 1; round <= 2; ++round) {
    s.clock.then_when(
        [&s, round] { return s.launcher.running(sim_name(round, 4)); },
        [&s, round] {
          // Round 2's members finish in the other order: its fastest are 4, 3, 2.
          for (int i : round == 1 ? std::vector<int>{0, 1, 2} : std::vector<int>{4, 3, 2}) {
            s.launcher.exit(sim_name(round, i));
          }
        });
    const std::string merge = "merge[round=" + std::to_string(round) + "]";
    s.clock.then_when([&s, merge] { return s.launcher.running(merge); },
                      [&s, merge] { s.launcher.exit(merge); });
  }
  s.clock.then_when([&] { return s.launcher.running("ens"); }, [&] { s.launcher.exit("ens"); });
  auto summary = s.go(g, journal, run, nullptr);
  REQUIRE_MESSAGE(summary.ok(), summary.status().message());
  CHECK(summary->status == RunStatus::succeeded);
  CHECK(summary->progress.dropped == 4);
  CHECK(s.launcher.cancels ==
        Lines{sim_name(1, 3), sim_name(1, 4), sim_name(2, 0), sim_name(2, 1)});
  CHECK(has(read(dir.path() + "/quorum/ens/round-2.json"),
            "\"members_dropped\": [\"" + sim_name(2, 0) + "\", \"" + sim_name(2, 1) + "\"]"));
}

TEST_CASE("Runtime.QuorumRounds.ResumeKeepsFinishedAndDroppedMembers") {
  TempDir dir;
  MemoryJournal journal;
  const std::string run = new_run(journal);
  const WorkflowGraph g = ensemble(dir.path(), 1);
  {
    // Session 1: the round closes, then the run is stopped while merge runs.
    Session s;
    s.clock.then([&] {
      s.launcher.exit(sim_name(1, 0));
      s.launcher.exit(sim_name(1, 2));
      s.launcher.exit(sim_name(1, 3));
    });
    s.clock.then_when([&] { return s.launcher.running("merge[round=1]"); },
                      [&] { s.cancel.request(); });
    auto summary = s.go(g, journal, run, nullptr);
    REQUIRE(summary.ok());
    CHECK(summary->status == RunStatus::cancelled);
  }
  auto previous = journal.replay(run);
  REQUIRE(previous.ok());
  Session s;
  s.clock.then_when([&] { return s.launcher.running("merge[round=1]"); },
                    [&] { s.launcher.exit("merge[round=1]"); });
  s.clock.then_when([&] { return s.launcher.running("ens"); }, [&] { s.launcher.exit("ens"); });
  auto summary = s.go(g, journal, run, &*previous);
  REQUIRE_MESSAGE(summary.ok(), summary.status().message());
  CHECK(summary->status == RunStatus::succeeded);
  // Neither the members that finished nor the dropped ones ran again; nothing was cancelled.
  CHECK(s.launched() == Lines{"merge[round=1]", "ens"});
  CHECK(s.launcher.cancels.empty());
  CHECK(history(journal, run, sim_name(1, 4)) ==
        Lines{"running:1", "cancelled:1:dropped by quorum: round 1 of 'ens' closed with 3 of 5"});
  CHECK(has(read(dir.path() + "/quorum/ens/round-1.json"),
            "\"members_dropped\": [\"" + sim_name(1, 1) + "\", \"" + sim_name(1, 4) + "\"]"));
}

TEST_CASE("Runtime.QuorumRounds.RecordIsJsonWithEscapedNames") {
  QuorumRecord r;
  r.group = "ens";
  r.sweep = "sim";
  r.policy = "static";
  r.round = 2;
  r.n = 3;
  r.target = 2;
  r.closed_after_s = 1.5;
  r.used = {{"sim[round=2,x=a\"b\\c]", 0.25}, {"sim[round=2,x=tab\there]", 1.5}};
  r.dropped = {{"sim[round=2,x=z]"}};
  const auto j = nlohmann::json::parse(quorum_record_json(r));
  CHECK(j["round"] == 2);
  CHECK(j["k"] == 2);
  CHECK(j["used"] == 2);
  CHECK(j["dropped"] == 1);
  CHECK(j["members_used"][0] == "sim[round=2,x=a\"b\\c]");
  CHECK(j["members_used"][1] == "sim[round=2,x=tab\there]");
  CHECK(j["members_dropped"][0] == "sim[round=2,x=z]");
  CHECK(j["arrivals_s"]["sim[round=2,x=a\"b\\c]"] == doctest::Approx(0.25));
  CHECK(j["closed_after_s"] == doctest::Approx(1.5));
  TempDir dir;
  REQUIRE(write_quorum_record(dir.path() + "/a/b/round-2.json", r).ok());
  CHECK(nlohmann::json::parse(read(dir.path() + "/a/b/round-2.json")) == j);
  // A path under a file cannot be made: an error naming it, not a crash.
  const Status bad = write_quorum_record(dir.path() + "/a/b/round-2.json/x.json", r);
  CHECK(bad.code() == ErrorCode::io_error);
  CHECK(bad.message().find("round-2.json/x.json") != std::string::npos);
}

TEST_CASE("Runtime.QuorumRounds.ADeadlineClosesTheRoundOnATurn") {
  TempDir dir;
  MemoryJournal journal;
  const std::string run = new_run(journal);
  const WorkflowGraph g = ensemble(dir.path(), 1);
  Session s;
  auto owned = std::make_unique<DeadlineQuorum>(10.0);
  DeadlineQuorum& policy = *owned;
  s.policy = std::move(owned);
  s.clock.then([&] {
    s.clock.advance(std::chrono::seconds(2));
    s.launcher.exit(sim_name(1, 3));
  });
  // Nothing else ends: the loop's waits run up to the policy's deadline, where it closes.
  s.clock.then_when(
      [&] { return s.launcher.running("merge[round=1]"); },
      [&] {
        CHECK(s.launcher.cancels.size() == 4);
        CHECK(s.clock.now() - s.launcher.last(sim_name(1, 0)).at >= std::chrono::seconds(10));
        // (The driver owns the policy: looked at while the run goes on.)
        CHECK(policy.used == std::vector<int>{1});
        REQUIRE_FALSE(policy.ticks.empty());
        CHECK(policy.ticks.back() == doctest::Approx(10.0));
        s.launcher.exit("merge[round=1]");
      });
  s.clock.then_when([&] { return s.launcher.running("ens"); }, [&] { s.launcher.exit("ens"); });
  auto summary = s.go(g, journal, run, nullptr);
  REQUIRE_MESSAGE(summary.ok(), summary.status().message());
  CHECK(summary->status == RunStatus::succeeded);
  CHECK(summary->progress.dropped == 4);
  CHECK(history(journal, run, sim_name(1, 0)) ==
        Lines{"running:1", "cancelled:1:dropped by quorum: round 1 of 'ens' closed with 1 of 5"});
}

TEST_CASE("Runtime.QuorumRounds.AFailedMemberFailsTheRound") {
  TempDir dir;
  MemoryJournal journal;
  const std::string run = new_run(journal);
  const WorkflowGraph g = ensemble(dir.path(), 2);
  Session s;
  s.clock.then([&] {
    s.launcher.exit(sim_name(1, 0));
    s.launcher.exit(sim_name(1, 1), 1);  // fails: not an arrival, and a failure of the run
  });
  s.clock.then([&] {
    CHECK(s.launcher.cancels.empty());  // one arrival of three: the round is still open
    for (int i : {2, 3, 4}) s.launcher.exit(sim_name(1, i));
  });
  auto summary = s.go(g, journal, run, nullptr);
  REQUIRE(summary.ok());
  CHECK(summary->status == RunStatus::failed);
  REQUIRE(summary->failures.size() == 1);
  CHECK(summary->failures[0].name == sim_name(1, 1));
  // merge and the gate were cancelled by the failure; no round 2 was submitted.
  CHECK(history(journal, run, "merge[round=1]").back().rfind("cancelled:0:", 0) == 0);
  for (const auto& l : s.launcher.launches) CHECK(l.name.find("round=2") == std::string::npos);
}
