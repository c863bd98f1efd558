#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "schedulers/placement/first_fit.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/queue/uwfq_queue.hpp"
#include "schedulers/sim/metrics.hpp"
#include "schedulers/sim/runtime_partitioning.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_generator.hpp"
#include "schedulers/sim/workload_io.hpp"

using namespace chorus;
using namespace chorus::sim;

namespace {

SimJob job(std::string id, std::string user, double arrival, std::vector<double> runtimes) {
  SimJob j;
  j.id = std::move(id);
  j.user = std::move(user);
  j.arrival_s = arrival;
  for (double r : runtimes) j.tasks.push_back(SimTask{r, 1, {}, {}});
  return j;
}

SimResult run(const Workload& w, const std::string& cluster, const std::string& policy) {
  auto c = parse_cluster(cluster);
  REQUIRE(c.ok());
  auto q = PolicyRegistry::with_builtins().make_queue(policy);
  REQUIRE(q.ok());
  FirstFit ff;
  auto r = simulate(w, *c, **q, ff);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  return std::move(*r);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Schedulers.Sim.ClusterParsesGroupsAndRejectsBadText") {
  auto c = parse_cluster("4x8+2x32");
  REQUIRE(c.ok());
  CHECK(c->nodes.size() == 6);
  CHECK(c->total_cores() == 96);
  CHECK(c->largest_node_cores() == 32);
  for (const char* bad : {"8y4", "0x4", "8x", "x4", "8x4+", "8x-1"}) {
    auto r = parse_cluster(bad);
    CHECK_MESSAGE(!r.ok(), bad);
    if (!r.ok()) CHECK(contains(r.status().message(), "NODESxCORES"));
  }
}

TEST_CASE("Schedulers.Sim.GeneratorsAreSeededAndDeterministic") {
  for (const auto& name : generator_names()) {
    CAPTURE(name);
    auto a = generate_workload(name, 7);
    auto b = generate_workload(name, 7);
    auto c = generate_workload(name, 8);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(c.ok());
    CHECK(validate_workload(*a).ok());
    REQUIRE(a->jobs.size() == b->jobs.size());
    bool same = true, differs = a->jobs.size() != c->jobs.size();
    for (std::size_t i = 0; i < a->jobs.size(); ++i) {
      same = same && a->jobs[i].arrival_s == b->jobs[i].arrival_s &&
             a->jobs[i].tasks[0].runtime_s == b->jobs[i].tasks[0].runtime_s;
      if (i < c->jobs.size()) {
        differs = differs || a->jobs[i].arrival_s != c->jobs[i].arrival_s ||
                  a->jobs[i].tasks[0].runtime_s != c->jobs[i].tasks[0].runtime_s;
      }
    }
    CHECK(same);
    CHECK(differs);
  }
  auto trace = generate_workload("trace", 1);
  REQUIRE(trace.ok());
  CHECK(trace->jobs.size() == 800);
  std::set<std::string> users;
  for (const auto& j : trace->jobs) users.insert(j.user);
  CHECK(users.size() > 20);
  CHECK(users.size() <= 27);
  auto unknown = generate_workload("2large2smal", 1);
  REQUIRE(!unknown.ok());
  CHECK(contains(unknown.status().message(), "did you mean '2large2small'"));
  CHECK(contains(unknown.status().message(), "known: "));
  CHECK(!generate_workload("trace", 1, -2).ok());
}

TEST_CASE("Schedulers.Sim.MetricsMatchAHandCheckedRun") {
  // One core: a's 3 s job at 0, b's 1 s job at 1. FIFO runs a 0-3, b 3-4.
  Workload w;
  w.jobs = {job("A", "a", 0, {3}), job("B", "b", 1, {1})};
  SimResult r = run(w, "1x1", "fifo");
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].response_s() == doctest::Approx(3));
  CHECK(r.jobs[1].start_s == doctest::Approx(3));
  CHECK(r.jobs[1].response_s() == doctest::Approx(3));
  Metrics m = compute_metrics(r, 1);
  CHECK(m.small_jobs == 1);  // B: work 1 <= median work 1
  CHECK(m.small_mean_response_s == doctest::Approx(3));
  CHECK(m.large_mean_response_s == doctest::Approx(3));
  CHECK(m.mean_slowdown == doctest::Approx((3.0 / 3 + 3.0 / 1) / 2));
  CHECK(m.p90_response_s == doctest::Approx(3));
  // Entitled: a 1 + 0.5·2 = 2, b 0.5·2 + 1 = 2; received: a 3, b 1 -> x = 1.5, 0.5.
  CHECK(m.jain_users == doctest::Approx(4.0 / (2 * (2.25 + 0.25))));
  // Ideal: b shares from t = 1 and finishes at 3; a at 4. Only b is late.
  auto ideal = ideal_finish_times(r.jobs, 1, {});
  CHECK(ideal[0] == doctest::Approx(4));
  CHECK(ideal[1] == doctest::Approx(3));
  CHECK(m.deadline_violation_ratio == doctest::Approx(0.5));
  CHECK(m.makespan_s == doctest::Approx(4));
  CHECK(jain_index({1, 1, 1}) == doctest::Approx(1));
  CHECK(jain_index({1, 0}) == doctest::Approx(0.5));
}

TEST_CASE("Schedulers.Sim.UwfqCutsSmallJobResponseFarBelowFifo") {
  // The paper's qualitative claim on 2 large + 2 small users: small jobs no longer wait for the
  // large users' backlog. Ordering of metrics only; the figures live in bench/.
  for (std::uint64_t seed : {1, 2}) {
    CAPTURE(seed);
    auto w = generate_workload("2large2small", seed);
    REQUIRE(w.ok());
    Metrics fifo = compute_metrics(run(*w, "8x4", "fifo"), 32);
    Metrics fair = compute_metrics(run(*w, "8x4", "fair"), 32);
    Metrics uwfq = compute_metrics(run(*w, "8x4", "uwfq"), 32);
    CHECK(uwfq.small_mean_response_s < 0.5 * fifo.small_mean_response_s);
    CHECK(uwfq.small_mean_response_s < fair.small_mean_response_s);
    CHECK(uwfq.jain_users > fifo.jain_users);
    CHECK(uwfq.large_mean_response_s < fair.large_mean_response_s);
  }
}

TEST_CASE("Schedulers.Sim.DependenciesAndClosedLoopArrivals") {
  Workload w;
  SimJob a = job("a1", "u", 0.5, {2, 3});
  a.tasks[1].after = {0};
  SimJob b = job("a2", "u", 1.0, {1});  // 1 s after a1 finishes
  b.after_previous = true;
  w.jobs = {a, b};
  SimResult r = run(w, "2x4", "uwfq");
  CHECK(r.jobs[0].finish_s == doctest::Approx(0.5 + 2 + 3));
  CHECK(r.jobs[0].alone_s == doctest::Approx(5));
  CHECK(r.jobs[1].arrival_s == doctest::Approx(5.5 + 1));
  CHECK(r.jobs[1].finish_s == doctest::Approx(7.5));
  CHECK(r.decisions == 3);
}

TEST_CASE("Schedulers.Sim.TasksWaitForOtherJobsTasks") {
  // b's task 0 waits for a's task 1 (ends at 3 s); c arrives at 4 s and waits for b's task 0,
  // which ended before c arrived, so c starts at once.
  Workload w;
  SimJob a = job("a", "u", 0, {1, 3});
  SimJob b = job("b", "v", 0, {2, 1});
  b.tasks[0].after_other = {TaskRef{0, 1}};
  SimJob c = job("c", "v", 4, {1});
  c.tasks[0].after_other = {TaskRef{1, 0}};
  w.jobs = {a, b, c};
  REQUIRE(validate_workload(w).ok());
  SimResult r = run(w, "1x4", "fifo");
  CHECK(r.jobs[0].finish_s == doctest::Approx(3));
  CHECK(r.jobs[1].finish_s == doctest::Approx(5));  // its task 1 ran at 0-1, task 0 at 3-5
  CHECK(r.jobs[2].start_s == doctest::Approx(5));   // b's task 0 ends at 5, after c arrived
  CHECK(r.jobs[2].finish_s == doctest::Approx(6));
  // Runtime partitioning leaves jobs tied by such waits whole (their indices are referenced).
  for (auto& j : w.jobs) j.divisible = true;
  w.jobs.push_back(job("d", "u", 0, {2}));
  w.jobs.back().divisible = true;
  Workload p = partition_divisible(w, 0.5);
  CHECK(p.jobs[1].tasks.size() == 2);
  CHECK(p.jobs[3].tasks.size() == 4);
  CHECK(validate_workload(p).ok());
}

TEST_CASE("Schedulers.Sim.BadWaitsOnOtherJobsAreClearErrors") {
  auto error_of = [](const Workload& w) { return validate_workload(w).message(); };
  Workload w;
  w.jobs = {job("a", "u", 0, {1}), job("b", "u", 0, {1})};
  w.jobs[1].tasks[0].after_other = {TaskRef{0, 5}};
  CHECK(contains(error_of(w), "job 'b' task 0 waits for task 5 of job #1, which is not a task"));
  w.jobs[1].tasks[0].after_other = {TaskRef{1, 0}};  // its own job: that is `after`
  CHECK(contains(error_of(w), "which is not a task of another job"));
  w.jobs[1].tasks[0].after_other = {TaskRef{0, 0}};
  w.jobs[0].tasks[0].after_other = {TaskRef{1, 0}};
  CHECK(contains(error_of(w), "waits, through other jobs' tasks, for itself (a cycle)"));
  w.jobs[0].tasks[0].after_other.clear();
  CHECK(validate_workload(w).ok());
  w.jobs[0].after_previous = true;
  CHECK(contains(error_of(w), "closed-loop (after_previous) jobs"));
}

TEST_CASE("Schedulers.Sim.RuntimePartitioningSplitsDivisibleJobsOnly") {
  CHECK(partition_runtime(2.0, 0.5).size() == 4);
  CHECK(partition_runtime(1.1, 0.5) == std::vector<double>(3, 1.1 / 3));
  CHECK(partition_runtime(0.3, 0.5).size() == 1);
  Workload w;
  SimJob d = job("d", "u", 0, {2, 1});
  d.divisible = true;
  d.tasks[1].after = {0};
  w.jobs = {d, job("n", "u", 0, {2})};
  Workload p = partition_divisible(w, 0.5);
  REQUIRE(p.jobs[0].tasks.size() == 6);
  CHECK(p.jobs[0].tasks[4].after == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(p.jobs[0].work() == doctest::Approx(3));
  CHECK(p.jobs[1].tasks.size() == 1);
  CHECK(validate_workload(p).ok());
}

TEST_CASE("Schedulers.Sim.InterleavedPiecesGoRoundRobinOverAJobsIndependentTasks") {
  Workload w;
  SimJob d = job("d", "u", 0, {1.5, 0.4, 0.9});  // 3 pieces of 0.5 s, 1 of 0.4, 2 of 0.45
  d.divisible = true;
  SimJob chained = job("c", "u", 0, {1, 1});
  chained.divisible = true;
  chained.tasks[1].after = {0};
  w.jobs = {d, chained};
  auto runtimes = [](const SimJob& j) {
    std::vector<double> r;
    for (const auto& t : j.tasks) r.push_back(std::round(t.runtime_s * 100) / 100);
    return r;
  };
  Workload listed = partition_divisible(w, 0.5);
  Workload mixed = partition_divisible(w, 0.5, PieceOrder::interleaved);
  CHECK(runtimes(listed.jobs[0]) == std::vector<double>{0.5, 0.5, 0.5, 0.4, 0.45, 0.45});
  // Round 0 of all three tasks, round 1 of the two with a second piece, round 2 of the first.
  CHECK(runtimes(mixed.jobs[0]) == std::vector<double>{0.5, 0.4, 0.45, 0.5, 0.45, 0.5});
  CHECK(mixed.jobs[0].work() == doctest::Approx(listed.jobs[0].work()));
  // A job with a wait inside keeps the listed order (a piece waits only for earlier ones).
  REQUIRE(mixed.jobs[1].tasks.size() == listed.jobs[1].tasks.size());
  for (std::size_t i = 0; i < mixed.jobs[1].tasks.size(); ++i)
    CHECK(mixed.jobs[1].tasks[i].after == listed.jobs[1].tasks[i].after);
  CHECK(validate_workload(mixed).ok());
  CHECK(parse_piece_order("interleaved") == PieceOrder::interleaved);
  CHECK_FALSE(parse_piece_order("shuffled"));
}

TEST_CASE("Schedulers.Sim.ReadsJsonAndCsvWorkloads") {
  auto j = read_workload_json(R"({"name": "t", "jobs": [
      {"id": "j1", "user": "ann", "arrival": 0, "size": "large", "tasks": {"count": 3, "runtime": 2}},
      {"id": "j2", "user": "bob", "arrival": 1.5, "class": "q",
       "tasks": [{"runtime": 1, "cores": 2}, {"runtime": 1, "after": [0]}]}]})",
                              "w.json");
  REQUIRE_MESSAGE(j.ok(), j.status().message());
  CHECK(j->jobs.size() == 2);
  CHECK(j->jobs[0].tasks.size() == 3);
  CHECK(j->jobs[0].size == SizeClass::large);
  CHECK(j->jobs[1].tasks[0].cores == 2);
  CHECK(j->jobs[1].tasks[1].after == std::vector<std::uint32_t>{0});
  auto c = read_workload_csv(
      "job,user,arrival,runtime,cores\nj1,ann,0,2,1\nj1,ann,0,3,1\nj2,bob,4,1,2\n", "w.csv");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->jobs.size() == 2);
  CHECK(c->jobs[0].work() == doctest::Approx(5));
  CHECK(c->jobs[1].arrival_s == doctest::Approx(4));
}

TEST_CASE("Schedulers.Sim.AWrittenWorkloadReadsBackToTheSameJobs") {
  // A generated, partitioned workload (what `chorus simulate --workload-out` writes) and a
  // hand-made one with every field the format has.
  auto gen = generate_workload("bursty", 3, 0.1);
  REQUIRE(gen.ok());
  Workload split = partition_divisible(*gen, 1.0);
  Workload hand;
  hand.name = "hand";
  SimJob j;
  j.id = "j\"1";
  j.user = "ann";
  j.job_class = "etl";
  j.size = SizeClass::small;
  j.arrival_s = 0.1 + 0.2;  // not a short decimal: must come back bit for bit
  j.after_previous = true;
  j.weight = 2.5;
  j.tasks = {SimTask{1.0 / 3, 2, {}, {}}, SimTask{2.0, 1, {0}, {}}};
  j.tasks[1].ranks = 4;
  j.tasks[1].nodes = 2;
  hand.jobs.push_back(j);
  for (const Workload* w : {&split, &hand}) {
    auto text = workload_json(*w);
    REQUIRE_MESSAGE(text.ok(), text.status().message());
    auto back = read_workload_json(*text, "w.json");
    REQUIRE_MESSAGE(back.ok(), back.status().message());
    CHECK(back->name == w->name);
    REQUIRE(back->jobs.size() == w->jobs.size());
    for (std::size_t i = 0; i < w->jobs.size(); ++i) {
      const SimJob& a = w->jobs[i];
      const SimJob& b = back->jobs[i];
      CHECK(b.id == a.id);
      CHECK(b.user == a.user);
      CHECK(b.job_class == a.job_class);
      CHECK(b.size == a.size);
      CHECK(b.arrival_s == a.arrival_s);
      CHECK(b.after_previous == a.after_previous);
      CHECK(b.divisible == a.divisible);
      CHECK(b.weight == a.weight);
      REQUIRE(b.tasks.size() == a.tasks.size());
      for (std::size_t t = 0; t < a.tasks.size(); ++t) {
        CHECK(b.tasks[t].runtime_s == a.tasks[t].runtime_s);
        CHECK(b.tasks[t].cores == a.tasks[t].cores);
        CHECK(b.tasks[t].after == a.tasks[t].after);
        CHECK(b.tasks[t].ranks == a.tasks[t].ranks);
        CHECK(b.tasks[t].nodes == a.tasks[t].nodes);
      }
    }
  }
  // What the format cannot say is refused, naming the job.
  Workload tied = hand;
  tied.jobs.push_back(j);
  tied.jobs[1].id = "j2";
  tied.jobs[1].after_previous = false;
  tied.jobs[0].after_previous = false;
  tied.jobs[1].tasks[0].after_other = {TaskRef{0, 0}};
  auto refused = workload_json(tied);
  REQUIRE(!refused.ok());
  CHECK(contains(refused.status().message(), "job 'j2'"));
}

TEST_CASE("Schedulers.Sim.BadWorkloadsGiveClearErrors") {
  auto early = read_workload_json(
      R"([{"id": "j1", "user": "a", "arrival": -1, "tasks": [{"runtime": 1}]}])", "w.json");
  REQUIRE(!early.ok());
  CHECK(early.status().message() ==
        "w.json: jobs[0].arrival: -1 s is out of range (arrivals are 0 to 1e+09 s)");

  auto no_runtime = read_workload_json(
      R"([{"id": "j1", "user": "a", "arrival": 0, "tasks": [{"cores": 1}]}])", "w.json");
  REQUIRE(!no_runtime.ok());
  CHECK(contains(no_runtime.status().message(), "has no runtime"));

  auto zero = read_workload_csv("job,user,arrival,runtime\nj1,a,0,0\n", "w.csv");
  REQUIRE(!zero.ok());
  CHECK(zero.status().message() ==
        "w.csv:2: runtime: 0 s is out of range (runtimes are more than 0 and at most 1e+09 s)");

  auto typo =
      read_workload_json(R"([{"id": "j1", "user": "a", "arival": 0, "tasks": []}])", "w.json");
  REQUIRE(!typo.ok());
  CHECK(contains(typo.status().message(), "did you mean 'arrival'"));

  auto syntax = read_workload_json("{\n  \"jobs\": [,]\n}", "w.json");
  REQUIRE(!syntax.ok());
  CHECK(contains(syntax.status().message(), "w.json:2:12:"));

  // A number beyond double range: nlohmann reports it without an offset; the reader still
  // names the place.
  auto huge = read_workload_json("[\n {\"id\": \"j1\", \"arrival\": 1e999}]", "w.json");
  REQUIRE(!huge.ok());
  CHECK(contains(huge.status().message(), "w.json:2:26:"));
  CHECK(contains(huge.status().message(), "1e999"));

  auto csv_early = read_workload_csv("job,user,arrival,runtime\nj1,a,-3,1\n", "w.csv");
  REQUIRE(!csv_early.ok());
  CHECK(contains(csv_early.status().message(), "w.csv:2: arrival: -3 s is out of range"));

  Workload wide;
  SimJob big = job("big", "a", 0, {1});
  big.tasks[0].cores = 64;
  wide.jobs = {big};
  auto c = parse_cluster("2x8");
  FifoQueue fifo;
  FirstFit ff;
  auto r = simulate(wide, *c, fifo, ff);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::unsatisfiable);
  CHECK(contains(r.status().message(), "needs 64 cores; the largest node has 8"));
}

TEST_CASE("Schedulers.Sim.ReportsAPolicyThatNamesAnUnqueuedTask") {
  struct Broken final : QueuePolicy {
    std::size_t n = 0;
    std::string_view name() const override { return "broken"; }
    void on_ready(const TaskSpec&, TimePoint) override { ++n; }
    std::optional<TaskId> next(const ClusterView&) override { return TaskId{12345}; }
    void on_start(const TaskSpec&, TimePoint) override { --n; }
    void remove(TaskId) override {}
    std::size_t size() const override { return n; }
  } broken;
  Workload w;
  w.jobs = {job("j", "u", 0, {1})};
  auto c = parse_cluster("1x1");
  FirstFit ff;
  auto r = simulate(w, *c, broken, ff);
  REQUIRE(!r.ok());
  CHECK(contains(r.status().message(), "policy 'broken' named task 12345"));
}

TEST_CASE("Schedulers.Sim.RecordsListEveryJobOfEveryRun") {
  Workload w;
  w.jobs = {job("A", "a", 0, {1}), job("B", "b,c", 0, {1})};
  SimResult r = run(w, "1x2", "uwfq");
  std::string csv = records_csv({r, r});
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
  CHECK(contains(csv, "uwfq,B,\"b,c\","));
  auto json = nlohmann::json::parse(records_json({r}));
  REQUIRE(json.size() == 2);
  CHECK(json[1].at("user") == "b,c");
}

TEST_CASE("Schedulers.Sim.JobWeightsFromTheWorkloadSplitAUsersShare") {
  // One user, two jobs at once on one core: "urgent" has twice the work of "bulk" but weight 4,
  // so its user-virtual deadline (4 / 4) comes before bulk's (2 / 1) and it runs first.
  const char* text = R"([
    {"id": "bulk", "user": "a", "arrival": 0, "tasks": {"count": 2, "runtime": 1}},
    {"id": "urgent", "user": "a", "arrival": 0, "weight": 4, "tasks": {"count": 4, "runtime": 1}}
  ])";
  auto w = read_workload_json(text, "w.json");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  CHECK(w->jobs[1].weight == 4);
  auto c = parse_cluster("1x1");
  REQUIRE(c.ok());
  FirstFit ff;
  for (double urgent_weight : {4.0, 1.0}) {
    CAPTURE(urgent_weight);
    PolicyContext context;
    if (urgent_weight != 1) context.job_weights = {{"urgent", urgent_weight}};
    auto q = PolicyRegistry::with_builtins().make_queue("uwfq", {}, context);
    REQUIRE(q.ok());
    auto r = simulate(*w, *c, **q, ff);
    REQUIRE(r.ok());
    bool urgent_first = r->jobs[1].finish_s < r->jobs[0].finish_s;
    CHECK(urgent_first == (urgent_weight > 1));
  }
  // Job weights are facts about the work offered to every policy: a pool policy does not weigh
  // jobs, so its schedule is the same with them as without.
  PolicyContext pool_context;
  pool_context.job_weights = {{"urgent", 2.0}};
  auto weighed = PolicyRegistry::with_builtins().make_queue("fair", {}, pool_context);
  auto plain = PolicyRegistry::with_builtins().make_queue("fair");
  REQUIRE(weighed.ok());
  REQUIRE(plain.ok());
  auto with_weights = simulate(*w, *c, **weighed, ff);
  auto without = simulate(*w, *c, **plain, ff);
  REQUIRE(with_weights.ok());
  REQUIRE(without.ok());
  for (std::size_t j = 0; j < w->jobs.size(); ++j)
    CHECK(with_weights->jobs[j].finish_s == without->jobs[j].finish_s);
}

TEST_CASE("Schedulers.Sim.NegativeJobWeightIsAClearError") {
  auto json = read_workload_json(
      R"([{"id": "j1", "user": "a", "arrival": 0, "weight": -2, "tasks": [{"runtime": 1}]}])",
      "w.json");
  REQUIRE(!json.ok());
  CHECK(contains(json.status().message(), "w.json: jobs[0].weight must be a positive number"));
  auto csv = read_workload_csv("job,user,arrival,runtime,weight\nj1,a,0,1,0\n", "w.csv");
  REQUIRE(!csv.ok());
  CHECK(contains(csv.status().message(), "w.csv:2: job 'j1' has weight 0"));
}

namespace {

// A placement seam: node 0 is best for every task, and user "patient"'s tasks would rather wait
// for it than take another node (PlacementPolicy::waits_for_better); the others take any.
class PatientForNodeZero final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "patient-for-node-0"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec& /*task*/, const NodeView& node) const override {
    return -node.index;
  }
  bool batch_scores() const override { return true; }
  bool waits_for_better(const TaskSpec& task, const NodeView& /*best*/, double /*best_score*/,
                        std::span<const NodeView* const> busy, TimePoint /*now*/) const override {
    if (task.user != "patient") return false;
    return std::any_of(busy.begin(), busy.end(), [](const NodeView* n) { return n->index == 0; });
  }
};

}  // namespace

TEST_CASE("Schedulers.Sim.ATaskWaitingForABusyNodeIsPassedOverAndKeepsItsPlace") {
  // Two 1-core nodes. "long" holds node 0 for 10 s; at 1 s "patient" would rather wait for it
  // than take node 1; at 1.5 s "other" arrives behind it. Passed over, "other" takes node 1 at
  // once (ends at 2.5 s), and "patient" still gets node 0 first when it frees (10 s to 11 s).
  // In the strict order "other" waited behind "patient" until 10 s.
  Workload w;
  w.jobs.push_back(job("long", "a", 0, {10}));
  w.jobs.push_back(job("waits", "patient", 1, {1}));
  w.jobs.push_back(job("behind", "b", 1.5, {1}));
  auto c = parse_cluster("2x1");
  REQUIRE(c.ok());
  for (const char* queue : {"fifo", "uwfq", "fair", "cfq", "ujf"}) {
    CAPTURE(queue);
    auto q = PolicyRegistry::with_builtins().make_queue(queue);
    REQUIRE(q.ok());
    PatientForNodeZero placement;
    auto r = simulate(w, *c, **q, placement);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    CHECK(r->jobs[2].start_s == doctest::Approx(1.5));
    CHECK(r->jobs[2].finish_s == doctest::Approx(2.5));
    CHECK(r->jobs[1].start_s == doctest::Approx(10));
    CHECK(r->jobs[1].finish_s == doctest::Approx(11));
  }
}
