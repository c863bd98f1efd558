#include <doctest/doctest.h>

#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/cfq_queue.hpp"
#include "schedulers/queue/fair_queue.hpp"
#include "schedulers/queue/ujf_queue.hpp"
#include "schedulers/queue/uwfq_queue.hpp"
#include "schedulers/queue/work_estimator.hpp"

using namespace chorus;
using namespace std::chrono_literals;

namespace {

// A queue harness: tasks by id, one node of `cores` cores, time in seconds from an epoch.
struct Harness {
  explicit Harness(int cores) : node{"n0", Resources{cores, 0, 0}} {
    view.info = &node;
    view.free = node.capacity;
  }
  TaskId add(QueuePolicy& q, std::string user, std::string job, double seconds, double at = 0,
             int cores = 1) {
    TaskSpec t;
    t.id = static_cast<TaskId>(tasks.size());
    t.name = "t" + std::to_string(t.id);
    t.user = std::move(user);
    t.job = std::move(job);
    t.per_rank = Resources{cores, 0, 0};
    t.estimate = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
    tasks.push_back(t);
    q.on_ready(tasks.back(), time(at));
    return t.id;
  }
  TimePoint time(double s) const {
    return TimePoint{} + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
  }
  std::optional<TaskId> next(QueuePolicy& q, double at = 0) {
    ClusterView c{std::span<const NodeView>(&view, 1), time(at)};
    return q.next(c);
  }
  // Takes the next task and starts it.
  TaskId start_next(QueuePolicy& q, double at = 0) {
    auto id = next(q, at);
    REQUIRE(id.has_value());
    q.on_start(tasks[*id], time(at));
    return *id;
  }
  NodeInfo node;
  NodeView view;
  std::vector<TaskSpec> tasks;
};

FairQueueOptions fq_options(int capacity, Duration grace = 0s,
                            std::map<std::string, double> weights = {}) {
  FairQueueOptions o;
  o.capacity_cores = capacity;
  o.grace = grace;
  o.weights = std::move(weights);
  return o;
}

}  // namespace

TEST_CASE("Schedulers.Registry.UnknownQueueListsKnownOnes") {
  auto reg = PolicyRegistry::with_builtins();
  auto q = reg.make_queue("uwfqq");
  REQUIRE(!q.ok());
  std::string msg = q.status().message();
  CHECK(msg.find("did you mean 'uwfq'") != std::string::npos);
  CHECK(msg.find("cfq, fair, fifo, ujf, uwfq") != std::string::npos);
}

TEST_CASE("Schedulers.Queues.EveryBuiltinReturnsEachTaskOnceAndSkipsRemoved") {
  auto reg = PolicyRegistry::with_builtins();
  for (const auto& name : reg.queue_names()) {
    CAPTURE(name);
    auto q = reg.make_queue(name);
    REQUIRE(q.ok());
    Harness h(4);
    for (int i = 0; i < 30; ++i) {
      h.add(**q, "u" + std::to_string(i % 3), i % 2 ? "job" + std::to_string(i % 5) : "",
            1.0 + i % 4, i * 0.1);
    }
    CHECK((*q)->size() == 30);
    (*q)->remove(7);
    (*q)->remove(7);  // idempotent
    (*q)->remove(12);
    CHECK((*q)->size() == 28);
    std::vector<int> seen(30, 0);
    double t = 3;
    while (auto id = h.next(**q, t)) {
      seen[*id] += 1;
      (*q)->on_start(h.tasks[*id], h.time(t));
      (*q)->on_finish(h.tasks[*id], TaskState::succeeded, 1s, h.time(t + 1));
      t += 0.5;
    }
    CHECK((*q)->size() == 0);
    for (int i = 0; i < 30; ++i) CHECK(seen[i] == (i == 7 || i == 12 ? 0 : 1));
  }
}

TEST_CASE("Schedulers.Queues.APassedOverTaskLetsOthersByAndComesFirstAgain") {
  // policy.hpp: a task that waits for a busy node by its placement policy's choice is passed
  // over for the rest of the dispatch pass and named first again in the next one.
  auto reg = PolicyRegistry::with_builtins();
  for (const auto& name : reg.queue_names()) {
    CAPTURE(name);
    auto q = reg.make_queue(name);
    REQUIRE(q.ok());
    Harness h(64);
    for (int i = 0; i < 20; ++i) h.add(**q, "u" + std::to_string(i), "", 1.0, i * 0.01);
    (*q)->begin_pass();
    const auto first = h.next(**q, 1);
    REQUIRE(first.has_value());
    REQUIRE((*q)->pass_over(*first));
    CHECK_FALSE((*q)->pass_over(*first));  // named again: the caller stops rather than loops
    const auto second = h.next(**q, 1);
    REQUIRE(second.has_value());
    CHECK(*second != *first);
    (*q)->on_start(h.tasks[*second], h.time(1));
    (*q)->begin_pass();
    CHECK(h.next(**q, 1) == first);  // kept its place
    // At most 16 passed over per pass; past that the order is strict again.
    (*q)->begin_pass();
    std::set<TaskId> passed;
    for (int i = 0; i < 16; ++i) {
      const auto id = h.next(**q, 1);
      REQUIRE(id.has_value());
      CHECK(passed.insert(*id).second);
      CHECK((*q)->pass_over(*id));
    }
    const auto seventeenth = h.next(**q, 1);
    REQUIRE(seventeenth.has_value());
    CHECK(passed.count(*seventeenth) == 0);
    CHECK_FALSE((*q)->pass_over(*seventeenth));
    CHECK((*q)->size() == 19);
  }
}

TEST_CASE("Schedulers.Uwfq.DeadlinesChainWithinAUserInUserVirtualDeadlineOrder") {
  UwfqQueue q(fq_options(2));
  Harness h(2);
  auto a1 = h.add(q, "a", "j1", 2);  // job j1: two tasks of 2 core-s -> R = 4
  auto a2 = h.add(q, "a", "j1", 2);
  auto a3 = h.add(q, "a", "j2", 6);  // j2 (user-virtual deadline 6) chains after j1 (4): 4 + 6
  auto b1 = h.add(q, "b", "j3", 1);  // user b starts at V = 0
  CHECK(q.deadline_of(a1).value() == doctest::Approx(4));
  CHECK(q.deadline_of(a2).value() == doctest::Approx(4));
  CHECK(q.deadline_of(a3).value() == doctest::Approx(10));
  CHECK(q.deadline_of(b1).value() == doctest::Approx(1));
  // A short job of a's goes to the front of a's chain; the others move back by its work.
  auto a4 = h.add(q, "a", "j4", 1);
  CHECK(q.deadline_of(a4).value() == doctest::Approx(1));
  CHECK(q.deadline_of(a1).value() == doctest::Approx(5));
  CHECK(q.deadline_of(a3).value() == doctest::Approx(11));
  CHECK(h.start_next(q) == b1);  // tie at 1: the job seen first
  CHECK(h.start_next(q) == a4);
  CHECK(h.start_next(q) == a1);
  CHECK(h.start_next(q) == a2);
  CHECK(h.start_next(q) == a3);
}

TEST_CASE("Schedulers.Uwfq.UsersShortJobOvertakesItsOwnLongJobLater") {
  UwfqQueue q(fq_options(1));
  Harness h(1);
  auto long1 = h.add(q, "a", "long", 10);
  auto long2 = h.add(q, "a", "long", 10);  // R = 20, user-virtual deadline 20
  CHECK(h.start_next(q, 0) == long1);
  // At t = 4 a alone has had 4 units of service, all for `long` (U = 4): a job of 1 gets the
  // user-virtual deadline 5 < 20 and runs before the rest of `long`.
  auto quick = h.add(q, "a", "quick", 1, 4);
  CHECK(q.deadline_of(quick).value() < q.deadline_of(long2).value());
  CHECK(h.start_next(q, 4) == quick);
  CHECK(h.start_next(q, 5) == long2);
}

TEST_CASE("Schedulers.Uwfq.ALongActiveUsersNewJobIsAnchoredAtVirtualTimeNotInThePast") {
  // a's two jobs of 40 (10 tasks of 4 s each) share a's service side by side in a's own system,
  // so neither has left it when, at t = 10 (V = 40: a alone on 4 cores), a and a newcomer b each
  // submit a job of 1. a's new job overtakes a's long ones; it used to be anchored at a's chain
  // base (0), a deadline 39 units in the past that came before every other user's new job.
  UwfqQueue q(fq_options(4));
  Harness h(4);
  std::vector<TaskId> a1, a2;
  for (int i = 0; i < 10; ++i) a1.push_back(h.add(q, "a", "a1", 4));
  for (int i = 0; i < 10; ++i) a2.push_back(h.add(q, "a", "a2", 4));
  for (int i = 0; i < 4; ++i) h.start_next(q, 0);
  h.next(q, 10);
  REQUIRE(q.virtual_time() == doctest::Approx(40));
  auto quick = h.add(q, "a", "quick", 1, 10);
  auto other = h.add(q, "b", "other", 1, 10);
  CHECK(q.deadline_of(quick).value() >= q.virtual_time());
  CHECK(q.deadline_of(quick).value() == doctest::Approx(41));
  CHECK(q.deadline_of(other).value() == doctest::Approx(41));
  // a's deadlines are where they were: a1 done by V = 40 in a's chain order (its queued tasks
  // go first), a2 after it and the new job: 40 + 1 + 40 = a's virtual end.
  CHECK(q.deadline_of(a1.back()).value() == doctest::Approx(40));
  CHECK(q.deadline_of(a2.back()).value() == doctest::Approx(81));
  for (int i = 4; i < 10; ++i) CHECK(h.start_next(q, 10) == a1[static_cast<std::size_t>(i)]);
  CHECK(h.start_next(q, 10) == quick);  // tie at 41: the earlier job
  CHECK(h.start_next(q, 10) == other);
  CHECK(h.start_next(q, 10) == a2.front());
}

TEST_CASE("Schedulers.Uwfq.JobWeightsSplitAUsersShare") {
  FairQueueOptions o = fq_options(1);
  o.job_weights = {{"heavy", 4.0}};
  UwfqQueue q(std::move(o));
  Harness h(1);
  auto light = h.add(q, "a", "light", 2);  // user-virtual deadline 0 + 2 / 1
  auto heavy = h.add(q, "a", "heavy", 4);  // 0 + 4 / 4 = 1: first, despite more work
  CHECK(q.deadline_of(heavy).value() == doctest::Approx(4));
  CHECK(q.deadline_of(light).value() == doctest::Approx(6));
  CHECK(h.start_next(q) == heavy);
  CHECK(h.start_next(q) == light);
  FairQueueOptions bad = fq_options(1);
  bad.job_weights = {{"j", -1.0}};
  auto made = UwfqQueue::create(std::move(bad));
  REQUIRE(!made.ok());
  CHECK(made.status().message().find("weight of job 'j' must be a positive number") !=
        std::string::npos);
}

TEST_CASE("Schedulers.Uwfq.LightUserOvertakesAHeavyUsersBacklog") {
  UwfqQueue uwfq(fq_options(4));
  auto fifo = PolicyRegistry::with_builtins().make_queue("fifo");
  REQUIRE(fifo.ok());
  for (QueuePolicy* q : {static_cast<QueuePolicy*>(&uwfq), fifo->get()}) {
    Harness h(4);
    for (int i = 0; i < 100; ++i) h.add(*q, "heavy", "h" + std::to_string(i), 1);
    TaskId light = h.add(*q, "light", "l", 1, 0.5);
    int position = 0;
    while (h.start_next(*q, 0.5) != light) ++position;
    if (q == &uwfq) {
      // V(0.5) = 4 cores × 0.5 s / 1 user = 2, so light's deadline is 3: behind heavy's jobs with
      // deadlines 1, 2 and (earlier seq) 3.
      CHECK(position == 3);
    } else {
      CHECK(position == 100);
    }
  }
}

TEST_CASE("Schedulers.Uwfq.VirtualTimeAdvancesAtCapacityOverActiveWeight") {
  UwfqQueue q(fq_options(3, 0s, {{"a", 2.0}, {"b", 1.0}}));
  Harness h(3);
  auto a = h.add(q, "a", "ja", 6);  // R/w = 3
  auto b = h.add(q, "b", "jb", 6);  // R/w = 6
  CHECK(q.deadline_of(a).value() == doctest::Approx(3));
  CHECK(q.deadline_of(b).value() == doctest::Approx(6));
  h.next(q, 1);  // rate C / (2 + 1) = 1
  CHECK(q.virtual_time() == doctest::Approx(1));
  h.next(q, 4);  // a retires at V = 3 (t = 3); then rate 3 / 1
  CHECK(q.virtual_time() == doctest::Approx(6));
  CHECK(q.active_flows() == 0);
}

TEST_CASE("Schedulers.Uwfq.ReturningUserKeepsItsPlaceOnlyWithinGrace") {
  for (double grace : {5.0, 1.0}) {
    CAPTURE(grace);
    UwfqQueue q(
        fq_options(2, std::chrono::duration_cast<Duration>(std::chrono::duration<double>(grace))));
    Harness h(2);
    h.add(q, "a", "a1", 1);    // D = 1
    h.add(q, "b", "b1", 100);  // keeps V moving
    h.next(q, 1);              // V = 1 at t = 1: a's end is reached; it lingers for `grace`
    CHECK(q.virtual_time() == doctest::Approx(1));
    CHECK(q.lingering_flows() == 1);
    h.next(q, 3);
    // grace 5: a still counts, rate 2 / 2, V(3) = 3. grace 1: a retired at t = 2, then rate
    // 2 / 1, V(3) = 2 + 2 = 4.
    CHECK(q.virtual_time() == doctest::Approx(grace > 2 ? 3.0 : 4.0));
    CHECK(q.lingering_flows() == (grace > 2 ? 1u : 0u));
    auto back = h.add(q, "a", "a2", 1, 3);
    // Within grace the chain continues from E_a = 1; after it, the user restarts at V.
    CHECK(q.deadline_of(back).value() == doctest::Approx(grace > 2 ? 2.0 : 5.0));
  }
}

TEST_CASE("Schedulers.Uwfq.TasksOfTheLastJobExtendItsDeadline") {
  UwfqQueue q(fq_options(1));
  Harness h(1);
  auto t1 = h.add(q, "a", "j", 1);
  CHECK(q.deadline_of(t1).value() == doctest::Approx(1));
  auto t2 = h.add(q, "a", "j", 2);
  CHECK(q.deadline_of(t1).value() == doctest::Approx(3));
  CHECK(q.deadline_of(t2).value() == doctest::Approx(3));
}

TEST_CASE("Schedulers.Cfq.IsFairBetweenJobsNotUsers") {
  // Three equal jobs at once: cfq gives them all deadline V + R and keeps arrival order, so the
  // user with two jobs runs both before the other user; uwfq alternates users.
  CfqQueue cfq(fq_options(1));
  UwfqQueue uwfq(fq_options(1));
  std::vector<std::string> order_cfq, order_uwfq;
  for (QueuePolicy* q : {static_cast<QueuePolicy*>(&cfq), static_cast<QueuePolicy*>(&uwfq)}) {
    Harness h(1);
    h.add(*q, "a", "j1", 4);
    h.add(*q, "a", "j2", 4);
    h.add(*q, "b", "j3", 4);
    auto& out = q == &cfq ? order_cfq : order_uwfq;
    for (int i = 0; i < 3; ++i) out.push_back(h.tasks[h.start_next(*q)].job);
  }
  CHECK(order_cfq == std::vector<std::string>{"j1", "j2", "j3"});
  CHECK(order_uwfq == std::vector<std::string>{"j1", "j3", "j2"});
}

TEST_CASE("Schedulers.Cfq.DeadlineIsVirtualTimeAtSubmitPlusWork") {
  CfqQueue q(fq_options(2));
  Harness h(2);
  h.add(q, "a", "j1", 10);
  h.add(q, "a", "j2", 10);
  h.next(q, 2);  // two active jobs: V grows at 2 / 2
  auto late = h.add(q, "b", "j3", 3, 2);
  CHECK(q.deadline_of(late).value() == doctest::Approx(2 + 3));
}

TEST_CASE("Schedulers.Fair.WeightsSplitPicksAndMinShareComesFirst") {
  PoolOptions o;
  o.weights = {{"a", 2.0}};
  FairQueue q(o);
  Harness h(8);
  for (int i = 0; i < 6; ++i) h.add(q, "a", "", 1);
  for (int i = 0; i < 6; ++i) h.add(q, "b", "", 1);
  std::string picks;
  for (int i = 0; i < 6; ++i) picks += h.tasks[h.start_next(q)].user;
  CHECK(picks == "abaaba");

  PoolOptions m;
  m.min_shares = {{"c", 2}};
  FairQueue q2(m);
  Harness h2(8);
  for (int i = 0; i < 3; ++i) h2.add(q2, "a", "", 1);
  for (int i = 0; i < 3; ++i) h2.add(q2, "c", "", 1);
  picks.clear();
  for (int i = 0; i < 4; ++i) picks += h2.tasks[h2.start_next(q2)].user;
  CHECK(picks == "ccaa");  // c needy twice; then a (0 / 1) before c (2 / 1)
}

TEST_CASE("Schedulers.Fair.FinishedTasksGiveTheirPoolPriorityBack") {
  FairQueue q;
  Harness h(8);
  auto a1 = h.add(q, "a", "", 1);
  h.add(q, "a", "", 1);
  h.add(q, "b", "", 1);
  h.add(q, "b", "", 1);
  CHECK(h.start_next(q) == a1);
  q.on_finish(h.tasks[a1], TaskState::succeeded, 1s, h.time(1));
  CHECK(h.tasks[h.start_next(q, 1)].user == "a");  // a has nothing running again: first by seq
  CHECK(h.tasks[h.start_next(q, 1)].user == "b");
}

TEST_CASE("Schedulers.FairAndUjf.DifferInsideAPool") {
  FairQueue fair;
  UjfQueue ujf;
  for (QueuePolicy* q : {static_cast<QueuePolicy*>(&fair), static_cast<QueuePolicy*>(&ujf)}) {
    Harness h(8);
    for (int i = 0; i < 3; ++i) h.add(*q, "a", "j1", 1);
    for (int i = 0; i < 3; ++i) h.add(*q, "a", "j2", 1);
    std::string jobs;
    for (int i = 0; i < 4; ++i) jobs += h.tasks[h.start_next(*q)].job.back();
    CHECK(jobs == (q == &fair ? "1212" : "1112"));
  }
}

TEST_CASE("Schedulers.Options.RejectNegativeWeightsAndShares") {
  auto uw = UwfqQueue::create(fq_options(4, 0s, {{"bob", -1.0}}));
  REQUIRE(!uw.ok());
  CHECK(uw.status().code() == ErrorCode::invalid_argument);
  CHECK(uw.status().message().find("weight of 'bob' must be a positive number") !=
        std::string::npos);
  PoolOptions o;
  o.min_shares = {{"ann", -2}};
  auto fair = FairQueue::create(o);
  REQUIRE(!fair.ok());
  CHECK(fair.status().message().find("minShare of user 'ann' must not be negative") !=
        std::string::npos);
  CHECK(!CfqQueue::create(fq_options(-1)).ok());
  CHECK(UwfqQueue::create(fq_options(4, 0s, {{"bob", 2.0}})).ok());
}

TEST_CASE("Schedulers.WorkEstimator.HistoryLearnsTheMeanPerJobClass") {
  HistoryWork est(5s);
  TaskSpec t;
  t.name = "train[lr=0.1]";
  t.per_rank = Resources{2, 0, 0};
  CHECK(est.task_work(t) == doctest::Approx(10));  // fallback 5 s × 2 cores
  t.estimate = 3s;
  CHECK(est.task_work(t) == doctest::Approx(6));  // declared
  est.observe(t, 1s);
  TaskSpec other = t;
  other.name = "train[lr=0.2]";
  est.observe(other, 3s);
  CHECK(job_class_of(other) == "train");
  CHECK(est.task_work(t) == doctest::Approx(4));  // mean 2 s × 2 cores
}

TEST_CASE("Schedulers.WorkEstimator.HistorySamplesPairRunningWithSucceeded") {
  std::vector<JournalEvent> events = {
      {"prep", 1, TaskState::running, 10},          {"train[lr=0.1]", 1, TaskState::running, 11},
      {"prep", 1, TaskState::succeeded, 14},        {"train[lr=0.1]", 1, TaskState::failed, 12},
      {"train[lr=0.1]", 2, TaskState::running, 13}, {"train[lr=0.1]", 2, TaskState::succeeded, 19},
      {"old", 1, TaskState::succeeded, 30},  // never seen running: no sample
  };
  TaskSpec prep;
  prep.name = "prep";
  prep.job = "etl";  // the current graph puts prep in job 'etl'
  auto samples = history_samples(events, std::span<const TaskSpec>(&prep, 1));
  REQUIRE(samples.size() == 2);
  CHECK(samples[0] == std::pair<std::string, double>{"etl", 4});
  CHECK(samples[1] == std::pair<std::string, double>{"train", 6});
}

TEST_CASE("Schedulers.Uwfq.HistoryFromTheConfigEstimatesWork") {
  // Two users with one undeclared job each: with history, a's class is known to be long (10 s),
  // b's short (1 s), so b goes first; without it both count as 1 s and a (first seen) goes first.
  for (bool with_history : {true, false}) {
    CAPTURE(with_history);
    PolicyContext context;
    if (with_history) {
      context.history = [] { return RuntimeSamples{{"long", 10}, {"short", 1}}; };
    }
    auto q = PolicyRegistry::with_builtins().make_queue("uwfq", {}, context);
    REQUIRE(q.ok());
    Harness h(1);
    auto a = h.add(**q, "a", "long", 0);
    auto b = h.add(**q, "b", "short", 0);
    CHECK(h.start_next(**q) == (with_history ? b : a));
  }
  // A pool policy estimates no work: it never asks for the history (nobody reads the journal).
  int asked = 0;
  PolicyContext pool;
  pool.history = [&asked] {
    ++asked;
    return RuntimeSamples{};
  };
  CHECK(PolicyRegistry::with_builtins().make_queue("fair", {}, pool).ok());
  CHECK(asked == 0);
}

TEST_CASE("Schedulers.Uwfq.LaneKeepsCoresFreeForShortJobsAndNeverStallsLongOnes") {
  // 4 cores, a 1-core lane, long = more than 10 core-seconds. A heavy user's 8 one-second tasks
  // of one 8-core-second job are short; a 40-core-second job's are long.
  FairQueueOptions o = fq_options(4);
  o.lane_cores = 1;
  o.lane_work = 10;
  UwfqQueue q(std::move(o));
  Harness h(4);
  std::vector<TaskId> heavy;
  for (int i = 0; i < 8; ++i) heavy.push_back(h.add(q, "heavy", "big", 5));
  // Long tasks start while at least one core stays free: 3 of 4.
  for (int i = 0; i < 3; ++i) h.start_next(q);
  CHECK(q.long_cores() == doctest::Approx(3));
  CHECK_FALSE(h.next(q).has_value());  // the 4th would leave no core for a short job
  // A light user's short job arrives: it starts at once, on the core the lane kept.
  TaskId light = h.add(q, "light", "small", 1, 0.1);
  CHECK(h.start_next(q, 0.1) == light);
  // With every long task done, a long one always may start, lane or not (no stall).
  for (TaskId t : {heavy[0], heavy[1], heavy[2]}) {
    q.on_finish(h.tasks[t], TaskState::succeeded, 5s, h.time(5));
  }
  CHECK(q.long_cores() == doctest::Approx(0));
  CHECK(h.next(q, 5).has_value());
}

TEST_CASE("Schedulers.Cfq.LaneKeepsCoresFreeForShortJobsToo") {
  FairQueueOptions o = fq_options(4);
  o.lane_cores = 1;
  o.lane_work = 10;
  CfqQueue q(std::move(o));
  Harness h(4);
  for (int i = 0; i < 8; ++i) h.add(q, "heavy", "big", 5);
  for (int i = 0; i < 3; ++i) h.start_next(q);
  CHECK(q.long_cores() == doctest::Approx(3));
  CHECK_FALSE(h.next(q).has_value());
  TaskId light = h.add(q, "light", "small", 1, 0.1);
  CHECK(h.start_next(q, 0.1) == light);
}

TEST_CASE("Schedulers.Uwfq.AJobStaysLongWhileTheVirtualSystemServesIt") {
  // 4 cores, heavy alone: V runs at 4 units/s, so by t = 8 the user's chain has served 32 of the
  // long job's 40 core-seconds. What is left of it (8) is below lane_work; what it is (40) is not.
  FairQueueOptions o = fq_options(4);
  o.lane_cores = 1;
  o.lane_work = 10;
  UwfqQueue q(std::move(o));
  Harness h(4);
  for (int i = 0; i < 8; ++i) h.add(q, "heavy", "big", 5);
  for (int i = 0; i < 3; ++i) h.start_next(q);
  h.add(q, "heavy", "other", 0.1, 8);  // the user's chain is settled at its arrival
  auto n = h.next(q, 8);
  REQUIRE(n.has_value());
  CHECK(h.tasks[*n].job == "other");
  q.on_start(h.tasks[*n], h.time(8));
  CHECK_FALSE(h.next(q, 8).has_value());
}

TEST_CASE("Schedulers.Uwfq.LaneCutoffIsTheMeanWorkOfJobsThatLeftTheQueue") {
  FairQueueOptions o = fq_options(2);
  o.lane_cores = 1;
  UwfqQueue q(std::move(o));
  Harness h(2);
  // No job has left yet: nothing counts as long, every task may start.
  CHECK(q.lane_cutoff() == std::numeric_limits<double>::infinity());
  auto a = h.add(q, "a", "a1", 1);
  auto b = h.add(q, "b", "b1", 3);
  h.start_next(q);
  h.start_next(q);
  CHECK(q.long_cores() == 0);
  q.on_finish(h.tasks[a], TaskState::succeeded, 1s, h.time(1));
  q.on_finish(h.tasks[b], TaskState::succeeded, 3s, h.time(3));
  // A job leaves once a later job of its user follows it. The first to leave sets the cutoff at
  // once; later ones move it every 16 jobs, to the mean over the window.
  h.add(q, "a", "a2", 1, 4);
  CHECK(q.lane_cutoff() == doctest::Approx(1.0));
  for (int i = 0; i < 17; ++i) {
    const double at = 10.0 + 10.0 * i;
    h.add(q, "b", "b" + std::to_string(i + 2), 3, at);
    const TaskId t = h.start_next(q, at);
    q.on_finish(h.tasks[t], TaskState::succeeded, 3s, h.time(at + 3));
  }
  // Left: a1 (1), b1 (3) and b2..b17 (3 each) by the time b18 arrived, the mean moved at the 17th.
  CHECK(q.lane_cutoff() > 2.5);
  CHECK(q.lane_cutoff() < 3.0);
}

TEST_CASE("Schedulers.Uwfq.LaneOptionsAreCheckedWhereTheyAreWritten") {
  auto option = [](const std::string& key, const std::string& text) {
    OptionEntry e;
    e.key = key;
    e.key_at = {"wf.yaml", 4, 5};
    e.value.text = text;
    e.value.at = {"wf.yaml", 4, 5 + static_cast<int>(key.size()) + 2};
    return e;
  };
  auto make = [](std::vector<OptionEntry> entries) {
    PolicyOptions o;
    o.entries = std::move(entries);
    return PolicyRegistry::with_builtins().make_queue("uwfq", o);
  };
  CHECK(make({option("lane_cores", "2"), option("lane_work", "30")}).ok());
  auto negative = make({option("lane_cores", "-1")});
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().message().find("wf.yaml:4:17: 'lane_cores' of queue policy 'uwfq' "
                                         "must be a whole number of cores") != std::string::npos);
  auto fraction = make({option("lane_cores", "1.5")});
  CHECK_FALSE(fraction.ok());
  CHECK(make({option("lane_cores", "auto")}).ok());
  auto word = make({option("lane_cores", "often")});
  REQUIRE_FALSE(word.ok());
  CHECK(word.status().message().find("or 'auto', got 'often'") != std::string::npos);
  auto zero_work = make({option("lane_work", "0")});
  REQUIRE_FALSE(zero_work.ok());
  CHECK(zero_work.status().message().find("'lane_work' of queue policy 'uwfq' must be a "
                                          "positive number of core-seconds, got 0") !=
        std::string::npos);
  FairQueueOptions bad = fq_options(4);
  bad.lane_cores = -2;
  CHECK_FALSE(UwfqQueue::create(std::move(bad)).ok());
}

TEST_CASE("Schedulers.Uwfq.AnAutoLaneFollowsTheShortJobsDemandWithinBounds") {
  // 64 cores: the auto lane is 1 to 4 (C / 16) cores wide, twice the short cores held on average
  // over the last minute or so.
  FairQueueOptions o = fq_options(64);
  o.lane_auto = true;
  o.lane_work = 10;
  UwfqQueue q(std::move(o));
  Harness h(64);
  CHECK(q.lane_width() == 1);
  // Three short jobs hold 3 cores for 300 s (five averaging times): 2 x 3 = 6, capped at 4.
  std::vector<TaskId> shorts;
  for (int i = 0; i < 3; ++i) shorts.push_back(h.add(q, "light", "s" + std::to_string(i), 1));
  for (int i = 0; i < 3; ++i) h.start_next(q);
  for (TaskId t : shorts) q.on_finish(h.tasks[t], TaskState::succeeded, 300s, h.time(300));
  CHECK(q.lane_width() == 4);
  // A long job now leaves the 4 free: 60 of its tasks start, the 61st would eat the lane.
  std::vector<TaskId> longs;
  for (int i = 0; i < 64; ++i) longs.push_back(h.add(q, "heavy", "big", 5, 300));
  for (int i = 0; i < 60; ++i) h.start_next(q, 300);
  CHECK_FALSE(h.next(q, 300).has_value());
  // Five minutes without short work: the average decays and the lane is 1 core again.
  q.on_finish(h.tasks[longs.front()], TaskState::succeeded, 300s, h.time(600));
  CHECK(q.lane_width() == 1);
  CHECK(h.next(q, 600).has_value());
}

TEST_CASE("Schedulers.Uwfq.LaneLetsALaterShortJobPassAHeldLongOne") {
  // The heavy user weighs 100: its long job's deadline (V + 40/100) comes before the light
  // user's short one (V + 1). With the lane full the long job is held and the short one, later
  // in deadline order, starts instead of the lane's core idling.
  FairQueueOptions o = fq_options(4, 0s, {{"heavy", 100.0}});
  o.lane_cores = 1;
  o.lane_work = 10;
  UwfqQueue q(std::move(o));
  Harness h(4);
  for (int i = 0; i < 8; ++i) h.add(q, "heavy", "big", 5);
  for (int i = 0; i < 3; ++i) h.start_next(q);
  TaskId light = h.add(q, "light", "small", 1, 0.1);
  CHECK(q.deadline_of(light).value() > q.deadline_of(7).value());
  CHECK(h.start_next(q, 0.1) == light);
  CHECK_FALSE(h.next(q, 0.1).has_value());
  CHECK(q.size() == 5);  // the held ones are still queued, in their order
}
