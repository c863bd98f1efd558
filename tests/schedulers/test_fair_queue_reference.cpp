// uwfq and cfq against a straightforward reference of their dispatch rule: next() returns, of all
// queued tasks, one whose job has the smallest virtual deadline, and the oldest queued task of that
// job. The reference scans every queued task (deadline_of) on each decision; the queues find it
// through per-flow sorted runs and heaps and a heap over flows, which this must agree with on
// random workloads (users and jobs with weights, jobs growing, short jobs overtaking long ones in
// a user's chain, removals, users retiring and returning).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "schedulers/queue/cfq_queue.hpp"
#include "schedulers/queue/uwfq_queue.hpp"

using namespace chorus;

namespace {

struct Queued {
  TaskId id;
  std::string job;  // empty = a job of its own
};

class ReferenceCheck {
 public:
  ReferenceCheck(VirtualFairQueue& q, int cores) : q_(q), node_{"n0", Resources{cores, 0, 0}} {
    view_.info = &node_;
    view_.free = node_.capacity;
  }

  void submit(std::string user, std::string job, double work_s) {
    TaskSpec t;
    t.id = static_cast<TaskId>(tasks_.size());
    t.user = std::move(user);
    t.job = std::move(job);
    t.estimate = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(work_s));
    tasks_.push_back(t);
    q_.on_ready(tasks_.back(), now_);
    queued_.push_back({t.id, tasks_.back().job});
  }

  // One decision, checked against the reference; starts and finishes the task. False when empty.
  bool decide() {
    ClusterView c{std::span<const NodeView>(&view_, 1), now_};
    std::optional<TaskId> got = q_.next(c);
    if (queued_.empty()) {
      CHECK(!got.has_value());
      return false;
    }
    REQUIRE(got.has_value());
    double best = std::numeric_limits<double>::infinity();
    for (const Queued& t : queued_) best = std::min(best, *q_.deadline_of(t.id));
    auto it =
        std::find_if(queued_.begin(), queued_.end(), [&](const Queued& t) { return t.id == *got; });
    REQUIRE(it != queued_.end());
    CHECK(*q_.deadline_of(*got) == best);
    // The oldest queued task of its job: no earlier queued task of the same job and deadline.
    for (auto e = queued_.begin(); e != it; ++e) {
      bool same_job = !it->job.empty() && e->job == it->job;
      if (same_job && *q_.deadline_of(e->id) == best) {
        CHECK(e->id == *got);  // reports the task that should have gone first
      }
    }
    queued_.erase(it);
    q_.on_start(tasks_[*got], now_);
    q_.on_finish(tasks_[*got], TaskState::succeeded, std::chrono::milliseconds(50), now_);
    ++decisions_;
    return true;
  }

  void remove_random(std::mt19937_64& rng) {
    if (queued_.empty()) return;
    auto k = static_cast<std::ptrdiff_t>(rng() % queued_.size());
    q_.remove(queued_[static_cast<std::size_t>(k)].id);
    queued_.erase(queued_.begin() + k);
  }

  void wait(Duration d) { now_ += d; }
  std::size_t queued() const { return queued_.size(); }
  std::size_t decisions() const { return decisions_; }

 private:
  VirtualFairQueue& q_;
  NodeInfo node_;
  NodeView view_;
  TimePoint now_{};
  std::vector<TaskSpec> tasks_;
  std::vector<Queued> queued_;  // in submission order
  std::size_t decisions_ = 0;
};

FairQueueOptions weighted_options(Duration grace) {
  FairQueueOptions o;
  o.grace = grace;
  o.weights = {{"u1", 2}, {"u3", 0.5}, {"j4", 3}};
  o.job_weights = {{"j0", 2}, {"j3", 0.25}, {"j6", 5}};
  return o;
}

// Random arrivals, decisions and removals; works are continuous, so deadlines of different jobs
// do not tie and the reference's choice is unique.
void random_workload(VirtualFairQueue& q, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> work(0.01, 3.0);
  ReferenceCheck check(q, 4);
  for (int step = 0; step < 4000; ++step) {
    check.wait(std::chrono::microseconds(rng() % 300'000));
    auto r = rng() % 20;
    if (r < 10) {
      // One draw per statement: the order of a call's arguments is the compiler's (g++ and
      // clang drew these in opposite orders, so the two builds tested different workloads).
      auto j = rng() % 12;
      std::string user = "u" + std::to_string(rng() % 5);
      double w = work(rng);
      check.submit(user, j < 8 ? "j" + std::to_string(j) : "", w);
    } else if (r < 19) {
      check.decide();
    } else {
      check.remove_random(rng);
    }
  }
  while (check.decide()) {
  }
  CHECK(q.size() == 0);
  CHECK(check.decisions() > 1000);
}

}  // namespace

TEST_CASE("Schedulers.FairQueueReference.UwfqPicksTheSmallestDeadlineOnRandomWorkloads") {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {  // ~40 ms per seed
    CAPTURE(seed);
    UwfqQueue q(weighted_options(std::chrono::milliseconds(500)));
    random_workload(q, seed);
  }
}

TEST_CASE("Schedulers.FairQueueReference.CfqPicksTheSmallestDeadlineOnRandomWorkloads") {
  for (std::uint64_t seed = 101; seed <= 124; ++seed) {
    CAPTURE(seed);
    CfqQueue q(weighted_options(Duration::zero()));
    random_workload(q, seed);
  }
}

TEST_CASE("Schedulers.FairQueueReference.OneUsersLargeBacklogInAnyOrder") {
  // Thousands of one user's jobs of random work arrive at once (most out of deadline order, so
  // they are re-chained), then drain; the flow's run and heap grow past their compaction sizes.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> work(0.01, 3.0);
  FairQueueOptions o;
  o.capacity_cores = 2;
  UwfqQueue q(std::move(o));
  ReferenceCheck check(q, 2);
  for (int i = 0; i < 1500; ++i) check.submit("heavy", "b" + std::to_string(i), work(rng));
  for (int i = 0; i < 10; ++i) check.submit("light", "", work(rng));
  while (check.queued() > 0) {
    check.wait(std::chrono::milliseconds(10));
    check.decide();
  }
  CHECK(check.decisions() == 1510);
}

TEST_CASE("Schedulers.FairQueueReference.EachNewJobOvertakesAllEarlierOnes") {
  // One user's jobs arrive shortest last, so each new job goes to the front of the user's chain
  // and moves every later deadline; another user's jobs interleave. The queue keeps deadlines as
  // prefix sums of the chain, and its choices must still be the smallest deadline.
  FairQueueOptions o;
  o.capacity_cores = 2;
  UwfqQueue q(std::move(o));
  ReferenceCheck check(q, 2);
  for (int i = 0; i < 800; ++i) {
    check.submit("shrinking", "s" + std::to_string(i), 10.0 - 0.01 * i);
    if (i % 7 == 0) check.submit("steady", "t" + std::to_string(i), 0.5);
    if (i % 3 == 0) {
      check.wait(std::chrono::milliseconds(20));
      check.decide();
    }
  }
  while (check.queued() > 0) {
    check.wait(std::chrono::milliseconds(20));
    check.decide();
  }
  CHECK(q.size() == 0);
}
