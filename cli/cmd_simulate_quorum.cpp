// chorus simulate-quorum: train a real workload (synthetic logistic regression or softmax on the
// digits data) with n simulated workers under a straggler scenario, once per quorum policy of a
// --compare list and per seed, and print the time each took to the target loss (medians over the
// seeds). The simulator: schedulers/quorum/sgd/round_simulator.hpp; docs/quorum-simulator.md.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "core/text.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/quorum/sgd/digits.hpp"
#include "schedulers/quorum/sgd/logistic_workload.hpp"
#include "schedulers/quorum/sgd/round_simulator.hpp"
#include "schedulers/quorum/sgd/scenario.hpp"

namespace chorus::cli {
namespace {

// The defaults (docs/quorum-simulator.md, "Defaults", says how they were picked).
struct Args {
  std::string workload = "logistic";
  std::size_t dim = 100;
  std::size_t samples = 10'000;
  std::uint64_t data_seed = 1;
  std::string digits;  // default: sgd::default_digits_path()
  std::string scenario = "S1";
  double base_s = 0.01;
  double tail_s = 0.01;
  double pareto_alpha = 1.5;
  double slow_factor = 4.0;
  double burst_enter = 0.05;
  double burst_leave = 0.3;
  int switch_at = 150;
  int n = 16;
  int batch = 0;  // 0: the workload's default (kDefaults)
  double lr = 0;  // 0: the workload's default
  std::string mode = "interrupt";
  double overhead_s = 0;
  std::string compare = "wait-all";
  int seeds = 1;
  std::uint64_t seed = 1;
  double target_loss = std::numeric_limits<double>::quiet_NaN();
  double target_fraction = sgd::kDefaultTargetFraction;
  int max_iterations = 3000;
  double max_time_s = std::numeric_limits<double>::infinity();
  bool curvature = false;
  int jobs = 1;
  std::string trace_out;
  bool json = false;
};

// Per workload, the batch and step that make the trade-off real (docs/quorum-simulator.md,
// "Defaults"): wait-all reaches the target in ~150-250 rounds, gradient noise matters (small k
// needs more rounds, and the smallest never gets there).
struct WorkloadDefaults {
  int batch;
  double lr;
};
constexpr WorkloadDefaults kLogisticDefaults{32, 0.05};
constexpr WorkloadDefaults kDigitsDefaults{8, 4.0};

[[noreturn]] void fail(const Output& out, const std::string& message, int code = kExitBadInput) {
  out.error(message);
  throw CLI::RuntimeError(code);
}

// One entry of --compare: a registered policy and its options.
struct PolicySpec {
  std::string label;  // as it prints: "static:b=4"
  std::string name;
  PolicyOptions options;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t at = s.find(sep, from);
    out.push_back(s.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

std::optional<std::pair<long, long>> int_range(const std::string& v) {
  const std::size_t dots = v.find("..");
  if (dots == std::string::npos || dots == 0) return std::nullopt;
  try {
    std::size_t a = 0;
    std::size_t b = 0;
    const long lo = std::stol(v.substr(0, dots), &a);
    const long hi = std::stol(v.substr(dots + 2), &b);
    if (a != dots || b != v.size() - dots - 2) return std::nullopt;
    return std::make_pair(lo, hi);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "wait-all,static:b=2,dbw+:grace=0,min_k=2,static:b=0..15": items separated by commas; an item
// with '=' and no ':' continues the options of the policy before it; one option's value may be
// an integer range LO..HI, which expands to one policy per value.
std::vector<PolicySpec> parse_compare(const Output& out, const std::string& text) {
  struct Raw {
    std::string name;
    std::vector<std::pair<std::string, std::string>> options;
  };
  std::vector<Raw> raws;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) fail(out, "--compare: an empty policy name in '" + text + "'");
    const std::size_t colon = item.find(':');
    std::string opts;
    if (colon == std::string::npos && item.find('=') != std::string::npos) {
      if (raws.empty()) fail(out, "--compare: option '" + item + "' before any policy name");
      opts = item;
    } else {
      raws.push_back({item.substr(0, colon), {}});
      if (colon == std::string::npos) continue;
      opts = item.substr(colon + 1);
    }
    const std::size_t eq = opts.find('=');
    if (eq == std::string::npos || eq == 0) {
      fail(out, "--compare: '" + opts + "' of policy '" + raws.back().name +
                    "' is not KEY=VALUE (write NAME:key=value,key=value)");
    }
    raws.back().options.emplace_back(opts.substr(0, eq), opts.substr(eq + 1));
  }
  std::vector<PolicySpec> specs;
  for (const Raw& raw : raws) {
    // At most one ranged option per policy expands.
    std::size_t ranged = raw.options.size();
    std::pair<long, long> range{0, 0};
    for (std::size_t i = 0; i < raw.options.size(); ++i) {
      if (auto r = int_range(raw.options[i].second)) {
        if (ranged != raw.options.size()) {
          fail(out, "--compare: policy '" + raw.name + "' has two ranges; give one");
        }
        if (r->first > r->second || r->second - r->first > 1000) {
          fail(out, "--compare: the range '" + raw.options[i].second + "' of policy '" + raw.name +
                        "' must go up, by at most 1000 values");
        }
        ranged = i;
        range = *r;
      }
    }
    const long lo = ranged < raw.options.size() ? range.first : 0;
    const long hi = ranged < raw.options.size() ? range.second : 0;
    for (long v = lo; v <= hi; ++v) {
      PolicySpec spec;
      spec.name = raw.name;
      spec.label = raw.name;
      for (std::size_t i = 0; i < raw.options.size(); ++i) {
        const std::string value = i == ranged ? std::to_string(v) : raw.options[i].second;
        spec.label += (i == 0 ? ":" : ",") + raw.options[i].first + "=" + value;
        OptionEntry e;
        e.key = raw.options[i].first;
        e.key_at.source = "--compare";
        e.value.text = value;
        e.value.at.source = "--compare";
        spec.options.set(std::move(e));
      }
      specs.push_back(std::move(spec));
    }
  }
  return specs;
}

// k above n, or b leaving no worker, is a mistake rather than "all n": refused.
void check_quorum_size(const Output& out, const PolicySpec& p, int n) {
  for (const OptionEntry& e : p.options.entries) {
    if (e.key != "k" && e.key != "b") continue;
    const auto v = number_of(e.value);
    if (!v) continue;  // the registry names the bad value
    if (e.key == "k" && *v > n) {
      fail(out, "--compare: " + p.label + ": k " + e.value.text + " is above the " +
                    std::to_string(n) + " workers (--n)");
    }
    if (e.key == "b" && *v > n - 1) {
      fail(out, "--compare: " + p.label + ": b " + e.value.text + " leaves no worker of the " +
                    std::to_string(n) + " (--n): b goes from 0 to " + std::to_string(n - 1));
    }
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  if (v.size() % 2 == 1) return v[m];
  if (std::isinf(v[m])) return v[m];
  return 0.5 * (v[m - 1] + v[m]);
}

void run(const Args& a) {
  const Output out = Output::for_command(a.json);
  std::unique_ptr<sgd::Workload> workload;
  if (a.workload == "logistic") {
    if (a.dim < 1 || a.samples < 1) fail(out, "--dim and --samples must be at least 1");
    workload = sgd::make_logistic({a.dim, a.samples, 1e-4, a.data_seed});
  } else if (a.workload == "digits") {
    const std::string path = a.digits.empty() ? sgd::default_digits_path() : a.digits;
    auto data = sgd::read_digits_csv(path);
    if (!data.ok()) {
      fail(out, data.status().message() +
                    " (the digits data: scripts/fetch_digits.sh DEST, or --digits FILE, or "
                    "$CHORUS_DIGITS)");
    }
    workload = sgd::make_softmax(std::move(*data));
  } else {
    fail(out, "--workload: unknown workload '" + a.workload + "'" +
                  did_you_mean(a.workload, {"logistic", "digits"}) + "; known: digits, logistic");
  }
  const auto scenario = sgd::parse_scenario(a.scenario);
  if (!scenario) {
    fail(out, "--scenario: unknown scenario '" + a.scenario +
                  "'; known: S0..S6 or none, shifted-exp, pareto, markov, two-slow, "
                  "regime-switch, lr-step");
  }
  sgd::RoundMode mode = sgd::RoundMode::interrupt;
  if (a.mode == "timed") {
    mode = sgd::RoundMode::timed;
  } else if (a.mode != "interrupt") {
    fail(out, "--mode: unknown mode '" + a.mode + "'; known: interrupt, timed");
  }
  const WorkloadDefaults defaults = a.workload == "digits" ? kDigitsDefaults : kLogisticDefaults;
  const int batch = a.batch == 0 ? defaults.batch : a.batch;
  const double lr = a.lr == 0 ? defaults.lr : a.lr;
  if (a.n < 1) fail(out, "--n: at least 1 worker (got " + std::to_string(a.n) + ")");
  if (batch < 1) fail(out, "--batch: at least 1 sample (got " + std::to_string(batch) + ")");
  if (!(lr > 0) || !std::isfinite(lr)) fail(out, "--lr: a positive step size");
  if (a.seeds < 1) fail(out, "--seeds: at least 1");
  if (a.max_iterations < 1) fail(out, "--max-iterations: at least 1");
  if (!(a.overhead_s >= 0) || !std::isfinite(a.overhead_s)) {
    fail(out, "--overhead: a finite number of seconds >= 0");
  }
  if (a.switch_at < 0) fail(out, "--switch-at: an iteration >= 0 (0: half of --max-iterations)");
  if (!(a.base_s > 0) || !(a.tail_s >= 0) || !(a.pareto_alpha > 1) || !(a.slow_factor >= 1) ||
      !(a.burst_enter >= 0 && a.burst_enter <= 1) || !(a.burst_leave >= 0 && a.burst_leave <= 1)) {
    fail(out,
         "scenario parameters: --base > 0, --tail >= 0, --pareto-alpha > 1, --slow-factor >= 1, "
         "--burst-enter and --burst-leave in [0, 1]");
  }
  if (!(a.target_fraction > 0 && a.target_fraction < 1)) {
    fail(out, "--target-fraction: between 0 and 1 (exclusive)");
  }
  if (a.jobs < 1) fail(out, "--jobs: at least 1");

  const PolicyRegistry registry = PolicyRegistry::with_builtins();
  const std::vector<PolicySpec> specs = parse_compare(out, a.compare);
  const OptionOrigin at{"--compare", 0, 0};
  for (const PolicySpec& p : specs) {
    check_quorum_size(out, p, a.n);
    auto made = registry.make_quorum(p.name, p.options, {}, at);
    if (!made.ok()) fail(out, made.status().message());
  }

  sgd::SimConfig config;
  config.n = a.n;
  config.batch = batch;
  config.learning_rate = lr;
  config.scenario.scenario = *scenario;
  config.scenario.base_s = a.base_s;
  config.scenario.tail_s = a.tail_s;
  config.scenario.pareto_alpha = a.pareto_alpha;
  config.scenario.slow_factor = a.slow_factor;
  config.scenario.burst_enter = a.burst_enter;
  config.scenario.burst_leave = a.burst_leave;
  config.scenario.switch_at = a.switch_at;
  config.mode = mode;
  config.overhead_s = a.overhead_s;
  config.max_iterations = a.max_iterations;
  config.max_time_s = a.max_time_s;
  config.curvature_probe = a.curvature;
  config.trace = !a.trace_out.empty();

  // F* costs a long full-batch descent: skipped when the target is given (the bench computes it
  // once and passes it to its other processes).
  sgd::LossTarget target;
  if (std::isnan(a.target_loss)) {
    target = sgd::loss_target(*workload, a.target_fraction);
  } else {
    std::vector<double> w0(workload->dim());
    workload->initial(w0);
    target = {workload->loss(w0), std::numeric_limits<double>::quiet_NaN(), a.target_loss};
  }
  config.target_loss = target.target;

  // Every (policy, seed) run is independent: --jobs threads take them in turn.
  const std::size_t runs = specs.size() * static_cast<std::size_t>(a.seeds);
  std::vector<sgd::SimResult> results(runs);
  std::vector<std::string> errors(runs);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t r = next++; r < runs; r = next++) {
      const PolicySpec& p = specs[r / static_cast<std::size_t>(a.seeds)];
      sgd::SimConfig c = config;
      c.seed = a.seed + r % static_cast<std::size_t>(a.seeds);
      auto policy = registry.make_quorum(p.name, p.options, {}, at);
      if (!policy.ok()) {
        errors[r] = policy.status().message();
        continue;
      }
      auto res = sgd::simulate_rounds(*workload, **policy, c);
      if (!res.ok()) {
        errors[r] = res.status().message();
        continue;
      }
      results[r] = std::move(*res);
    }
  };
  const int threads = std::min<int>(a.jobs, static_cast<int>(runs));
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) fail(out, e);
  }

  QuorumSimTable table;
  table.workload = workload->name();
  table.scenario = std::string(sgd::scenario_name(*scenario));
  table.mode = a.mode;
  table.n = a.n;
  table.batch = batch;
  table.learning_rate = lr;
  table.overhead_s = a.overhead_s;
  table.switch_at = a.switch_at > 0 ? a.switch_at : a.max_iterations / 2;
  table.seeds = a.seeds;
  table.first_seed = a.seed;
  table.max_iterations = a.max_iterations;
  table.initial_loss = target.initial;
  table.optimum_loss = target.optimum;
  table.target_loss = config.target_loss;
  for (std::size_t p = 0; p < specs.size(); ++p) {
    QuorumPolicyRow row;
    row.label = specs[p].label;
    row.runs = a.seeds;
    std::vector<double> rounds, ks, losses, ns;
    for (int s = 0; s < a.seeds; ++s) {
      const sgd::SimResult& r =
          results[p * static_cast<std::size_t>(a.seeds) + static_cast<std::size_t>(s)];
      row.reached += r.reached ? 1 : 0;
      row.times_s.push_back(r.reached ? r.time_to_target : std::numeric_limits<double>::infinity());
      rounds.push_back(r.reached ? r.rounds_to_target : r.iterations);
      ks.push_back(r.mean_k);
      losses.push_back(r.final_loss);
      ns.push_back(r.policy_calls > 0 ? 1e9 * r.policy_seconds / double(r.policy_calls) : 0.0);
    }
    row.median_time_s = median(row.times_s);
    row.median_rounds = median(rounds);
    row.median_mean_k = median(ks);
    row.median_final_loss = median(losses);
    row.policy_ns_per_call = median(ns);
    table.policies.push_back(std::move(row));
  }

  if (!a.trace_out.empty()) {
    std::ofstream f(a.trace_out, std::ios::trunc);
    f << "policy,seed,round,time_s,loss,k\n";
    char line[160];
    for (std::size_t r = 0; r < runs; ++r) {
      const std::string& label = specs[r / static_cast<std::size_t>(a.seeds)].label;
      const std::uint64_t seed = a.seed + r % static_cast<std::size_t>(a.seeds);
      for (const sgd::RoundTrace& t : results[r].trace) {
        std::snprintf(line, sizeof line, ",%llu,%d,%.9g,%.9g,%d\n",
                      static_cast<unsigned long long>(seed), t.round, t.time, t.loss, t.k);
        f << '"' << label << '"' << line;
      }
    }
    f.close();
    if (!f) fail(out, a.trace_out + ": cannot write the trace (--trace-out)", kExitError);
  }
  out.quorum_simulation(table);
}

void add_simulate_quorum_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "simulate-quorum",
      "Train a workload with n simulated workers under a straggler scenario, per quorum policy");
  auto a = std::make_shared<Args>();
  cmd->add_option("--workload", a->workload, "logistic (synthetic) or digits (softmax)")
      ->capture_default_str();
  cmd->add_option("--dim", a->dim, "Logistic: parameters")->capture_default_str();
  cmd->add_option("--samples", a->samples, "Logistic: samples")->capture_default_str();
  cmd->add_option("--data-seed", a->data_seed, "Logistic: the data's seed")->capture_default_str();
  cmd->add_option("--digits", a->digits,
                  "Digits: the CSV (default $CHORUS_DIGITS or the build's data/digits.csv)");
  cmd->add_option("--scenario", a->scenario, "S0..S6 (docs/quorum-simulator.md)")
      ->capture_default_str();
  cmd->add_option("--base", a->base_s, "Service time without stragglers, seconds")
      ->capture_default_str();
  cmd->add_option("--tail", a->tail_s, "S1's exponential mean, seconds")->capture_default_str();
  cmd->add_option("--pareto-alpha", a->pareto_alpha, "S2's tail index")->capture_default_str();
  cmd->add_option("--slow-factor", a->slow_factor, "S3's slow state, S4's slow workers")
      ->capture_default_str();
  cmd->add_option("--burst-enter", a->burst_enter, "S3: chance per iteration to turn slow")
      ->capture_default_str();
  cmd->add_option("--burst-leave", a->burst_leave, "S3: chance per iteration to turn fast")
      ->capture_default_str();
  cmd->add_option("--switch-at", a->switch_at,
                  "S5, S6: the iteration of the change (0: half of --max-iterations)")
      ->capture_default_str();
  cmd->add_option("--n", a->n, "Workers")->capture_default_str();
  cmd->add_option("--batch", a->batch, "Samples per worker's gradient (0: logistic 32, digits 8)")
      ->capture_default_str();
  cmd->add_option("--lr", a->lr, "Base step size (0: logistic 0.05, digits 4)")
      ->capture_default_str();
  cmd->add_option("--mode", a->mode, "interrupt or timed (late workers finish and are timed)")
      ->capture_default_str();
  cmd->add_option("--overhead", a->overhead_s, "Seconds added to every round (communication)")
      ->capture_default_str();
  cmd->add_option("--compare", a->compare,
                  "Quorum policies, NAME[:key=value,key=value],... (static:b=0..15 expands)")
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "Seeds per policy; figures are medians over them")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "The first seed (service times and batches)")
      ->capture_default_str();
  cmd->add_option("--target-loss", a->target_loss,
                  "The training loss to reach (default: F* + --target-fraction (F(w0) - F*))");
  cmd->add_option("--target-fraction", a->target_fraction, "See --target-loss")
      ->capture_default_str();
  cmd->add_option("--max-iterations", a->max_iterations, "Rounds at most per run")
      ->capture_default_str();
  cmd->add_option("--max-time", a->max_time_s, "Simulated seconds at most per run");
  cmd->add_flag("--curvature", a->curvature, "Feed the policies the curvature probe");
  cmd->add_option("--jobs", a->jobs, "Threads running the (policy, seed) runs")
      ->capture_default_str();
  cmd->add_option("--trace-out", a->trace_out, "Write every run's rounds to FILE.csv");
  cmd->add_flag("--json", a->json, "Print one JSON document");
  cmd->callback([a] { run(*a); });
}

const CommandRegistrar registrar{"simulate-quorum", add_simulate_quorum_command};

}  // namespace
}  // namespace chorus::cli
