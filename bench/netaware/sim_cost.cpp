// The decision-loop cost of network-aware placement (issue 14's targets: <= 5 us per candidate
// node; 1,000 nodes in <= 200 us per decision), in the simulator's setting:
//   - a realistic model: 300 trees of depth 6, trained by XGBoost on rows of `chorus simulate`'s
//     modelled network (two background schedules);
//   - per candidate: fill_features + TreeModel::predict_s, and fill_features alone;
//   - XGBoost's own prediction of one row per call (what the evaluator replaces), and of 1,000;
//   - one decision over 1,000 nodes through PlacementStep with a policy that predicts every node,
//     with one that takes the analytic estimate of every node, the pre-filtered decision
//     (analytic estimate for all, the model on the best 32) as a batch loop of its own, and the
//     network-aware policy itself (its pre-filter and its wait rule), on idle nodes and with its
//     own tasks on the 500 best.
// Medians of 7 repeats; prints one JSON object. Run by bench/netaware/sim_cost.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/netaware/features.hpp"
#include "schedulers/netaware/network_aware_policy.hpp"
#include "schedulers/netaware/training/xgb_model.hpp"
#include "schedulers/netaware/tree_model.hpp"
#include "schedulers/placement/cluster_state.hpp"
#include "schedulers/placement/first_fit.hpp"
#include "schedulers/placement/placement_step.hpp"
#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/sim/network_model.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_generator.hpp"

namespace {

using namespace chorus;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Median over `repeats` of the per-iteration time: this thread's CPU time (the figure: the
// machine is shared, and wall time counts the other processes' turns) and wall time beside it.
struct Timing {
  double cpu_ns = 0;
  double wall_ns = 0;
};
std::vector<std::pair<std::string, Timing>> g_timings;

template <typename F>
double median_ns(const char* name, int repeats, long iterations, F&& body) {
  std::vector<double> cpu, wall;
  for (int r = 0; r < repeats; ++r) {
    const double c0 = thread_cpu_ns();
    const auto t0 = Clock::now();
    for (long i = 0; i < iterations; ++i) body(i);
    const auto t1 = Clock::now();
    const double c1 = thread_cpu_ns();
    const double n = static_cast<double>(iterations);
    cpu.push_back((c1 - c0) / n);
    wall.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  g_timings.push_back({name, {median(cpu), median(wall)}});
  return median(cpu);
}

void die(const Status& s) {
  std::fprintf(stderr, "sim_cost: %s\n", s.message().c_str());
  std::exit(1);
}

volatile double g_sink = 0;

// Predicts every node (no pre-filter): score = -predicted seconds.
class ModelAll : public PlacementPolicy {
 public:
  ModelAll(const TreeModel& m, const TimePoint& now) : model_(m), now_(now) {}
  std::string_view name() const override { return "model-all"; }
  Fit filter(const TaskSpec& t, const NodeView& n) const override { return fit_by_resources(t, n); }
  double score(const TaskSpec& t, const NodeView& n) const override {
    fill_features(t, n, now_, x_);
    return -model_.predict_s(x_);
  }

 private:
  const TreeModel& model_;
  const TimePoint& now_;
  mutable FeatureVector x_{};
};

// The analytic estimate of every node.
class AnalyticAll : public PlacementPolicy {
 public:
  explicit AnalyticAll(const TimePoint& now) : now_(now) {}
  std::string_view name() const override { return "analytic-all"; }
  Fit filter(const TaskSpec& t, const NodeView& n) const override { return fit_by_resources(t, n); }
  double score(const TaskSpec& t, const NodeView& n) const override {
    fill_features(t, n, now_, x_);
    const double a = feature(x_, Feature::analytic_s);
    return std::isnan(a) ? -1e300 : -a;
  }

 private:
  const TimePoint& now_;
  mutable FeatureVector x_{};
};

}  // namespace

int main() {
  // Rows from the modelled network: two background schedules, a data mix on 8x4.
  std::vector<TrainingRow> rows;
  for (std::uint64_t seed : {1, 2}) {
    auto net = sim::generate_network("sources=2,seed=" + std::to_string(seed), 8);
    if (!net.ok()) die(net.status());
    auto w = sim::generate_workload("4supersmall", seed, 0.1);
    if (!w.ok()) die(w.status());
    if (Status s = sim::assign_data(*w, "in=1:200,out=0:20,seed=" + std::to_string(seed), 2);
        !s.ok())
      die(s);
    auto cluster = sim::parse_cluster("8x4");
    FifoQueue q;
    FirstFit p;
    sim::SimOptions o;
    o.network = &*net;
    o.rows = &rows;
    auto r = sim::simulate(*w, *cluster, q, p, o);
    if (!r.ok()) die(r.status());
  }
  TrainOptions train;
  train.rounds = 300;
  train.max_depth = 6;
  const auto t_train0 = Clock::now();
  auto xgb = XgbModel::train(rows, train);
  if (!xgb.ok()) die(xgb.status());
  const double train_s = std::chrono::duration<double>(Clock::now() - t_train0).count();
  auto file = xgb->model_file({rows.size(), 2, "bench"});
  if (!file.ok()) die(file.status());
  auto model = TreeModel::parse(*file, "bench-model");
  if (!model.ok()) die(model.status());

  // 1,000 nodes with telemetry from a modelled network.
  constexpr std::size_t kNodes = 1000;
  auto net = sim::generate_network("sources=2,seed=7", kNodes);
  if (!net.ok()) die(net.status());
  std::vector<NodeInfo> infos;
  for (std::size_t i = 0; i < kNodes; ++i)
    infos.push_back(NodeInfo{"n" + std::to_string(i), Resources{4, 0, 0}});
  ClusterState state(infos);
  for (std::size_t i = 0; i < kNodes; ++i)
    net->write_facts(state.facts(static_cast<int>(i)), i, 100, 4, 0);
  TimePoint now = TimePoint{} + std::chrono::seconds(100);
  TaskSpec task;
  task.id = 0;
  task.name = "fetch";
  task.per_rank = Resources{1, 0, 0};
  task.data.input_bytes = 64'000'000;
  task.data.from = 0;
  task.data.output_bytes = 16'000'000;
  task.data.to = 1;
  task.data.cpu = std::chrono::seconds(2);
  const auto views = state.views();

  constexpr int kRepeats = 7;
  FeatureVector x{};
  const double fill_ns = median_ns("fill_features", kRepeats, 200'000, [&](long i) {
    fill_features(task, views[static_cast<std::size_t>(i) % kNodes], now, x);
    g_sink = g_sink + x[0];
  });
  const double candidate_ns = median_ns("candidate", kRepeats, 200'000, [&](long i) {
    fill_features(task, views[static_cast<std::size_t>(i) % kNodes], now, x);
    g_sink = g_sink + model->predict_s(x);
  });

  // XGBoost's own: one row per call (a DMatrix per call, as a decision loop would need), and 1,000.
  std::vector<FeatureVector> one(1), thousand(kNodes);
  for (std::size_t i = 0; i < kNodes; ++i) fill_features(task, views[i], now, thousand[i]);
  one[0] = thousand[0];
  const double xgb_one_ns = median_ns("xgboost_one_row", kRepeats, 200, [&](long) {
    auto p = xgb->predict_s(one);
    g_sink = g_sink + (*p)[0];
  });
  const double xgb_thousand_ns = median_ns("xgboost_1000_rows", kRepeats, 5, [&](long) {
    auto p = xgb->predict_s(thousand);
    g_sink = g_sink + (*p)[0];
  });

  // Decisions through PlacementStep.
  ModelAll model_all(*model, now);
  AnalyticAll analytic_all(now);
  PlacementStep step_model(model_all), step_analytic(analytic_all);
  int chosen_model = -1, chosen_analytic = -1;
  const double decide_model_ns = median_ns("decision_model_all", kRepeats, 100, [&](long) {
    chosen_model = step_model.place(task, state).node;
  });
  const double decide_analytic_ns = median_ns("decision_analytic_all", kRepeats, 1000, [&](long) {
    chosen_analytic = step_analytic.place(task, state).node;
  });

  // Pre-filtered: analytic estimate for all, the model on the best 32 (buffers made once).
  constexpr std::size_t kTop = 32;
  std::vector<std::pair<double, std::uint32_t>> est(kNodes);
  std::vector<FeatureVector> fv(kNodes);
  int chosen_prefilter = -1;
  const double decide_prefilter_ns = median_ns("decision_prefilter32", kRepeats, 1000, [&](long) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < kNodes; ++i) {
      if (fit_by_resources(task, views[i]) != Fit::now) continue;
      fill_features(task, views[i], now, fv[i]);
      const double a = feature(fv[i], Feature::analytic_s);
      est[n++] = {std::isnan(a) ? 1e300 : a, static_cast<std::uint32_t>(i)};
    }
    const std::size_t k = std::min(kTop, n);
    std::nth_element(est.begin(), est.begin() + static_cast<std::ptrdiff_t>(k),
                     est.begin() + static_cast<std::ptrdiff_t>(n));
    double best = 1e300;
    for (std::size_t j = 0; j < k; ++j) {
      const double p = model->predict_s(fv[est[j].second]);
      if (p < best) {
        best = p;
        chosen_prefilter = static_cast<int>(est[j].second);
      }
    }
  });

  // The network-aware policy itself (the model, prefilter 32, `wait: 0`, its defaults) through
  // PlacementStep, on the idle cluster; then with the 500 best nodes full of tasks it placed
  // (each due to end after its estimate), so that every decision also scans the busy nodes for
  // one that would finish the task sooner (the wait rule; at most `prefilter` of them get the
  // model). A fresh policy for each: the idle decisions note a due time on their node each time.
  NetworkAwarePolicy::Options po;
  auto policy_model = TreeModel::parse(*file, "bench-model");  // the same file, its own copy
  if (!policy_model.ok()) die(policy_model.status());
  po.model = std::make_shared<const TreeModel>(std::move(*policy_model));
  po.source_names = {"s0", "s1"};
  NetworkAwarePolicy idle_policy(po), busy_policy(po);
  PlacementStep step_idle(idle_policy), step_busy(busy_policy);
  int chosen_idle = -1;
  const double decide_policy_idle_ns = median_ns("decision_policy_idle", kRepeats, 1000, [&](long) {
    chosen_idle = step_idle.place(task, state, now).node;
  });
  ClusterState half = state;
  TaskSpec filler = task;
  filler.per_rank = Resources{4, 0, 0};
  int fillers_due = 0;  // fillers the policy placed itself, so with a due time it knows
  for (int i = 0; i < 500; ++i) {
    Placement p = step_busy.place(filler, half, now);
    if (p.fit == Fit::now) {
      ++fillers_due;
    } else {
      // It would rather wait for a busy node: the first free node instead (no due time noted).
      p = Placement{};
      p.fit = Fit::now;
      for (int n = 0; n < static_cast<int>(kNodes) && p.node < 0; ++n)
        if (filler.total().fits_in(half.view(n).free)) p.node = n;
    }
    half.reserve(filler, p);
  }
  int chosen_busy = -1, waited = 0;
  const double decide_policy_busy_ns =
      median_ns("decision_policy_half_busy", kRepeats, 1000, [&](long) {
        const Placement p = step_busy.place(task, half, now);
        chosen_busy = p.node;
        waited += p.waiting_for_better ? 1 : 0;
      });

  (void)decide_policy_idle_ns;
  (void)decide_policy_busy_ns;
  (void)fill_ns;
  (void)candidate_ns;
  (void)xgb_one_ns;
  (void)xgb_thousand_ns;
  (void)decide_model_ns;
  (void)decide_analytic_ns;
  (void)decide_prefilter_ns;
  std::printf("{\"rows\": %zu, \"trees\": %zu, \"depth\": %d, \"train_s\": %.3f, \"nodes\": %zu,\n",
              rows.size(), model->tree_count(), train.max_depth, train_s, kNodes);
  for (const auto& [name, t] : g_timings) {
    std::printf(" \"%s\": {\"cpu_ns\": %.1f, \"wall_ns\": %.1f},\n", name.c_str(), t.cpu_ns,
                t.wall_ns);
  }
  std::printf(
      " \"chosen\": {\"model_all\": %d, \"analytic_all\": %d, \"prefilter32\": %d, "
      "\"policy_idle\": %d, \"policy_half_busy\": %d, \"half_busy_waited\": %d, "
      "\"fillers_due\": %d}}\n",
      chosen_model, chosen_analytic, chosen_prefilter, chosen_idle, chosen_busy, waited,
      fillers_due);
  return 0;
}
