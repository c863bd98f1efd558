// chorus simulate: replay a workload (a JSON/CSV job file, a workflow file, or a seeded generator)
// through queue policies in simulated time and print their metrics side by side.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "cli/simulate_network.hpp"
#include "cli/workflow_workload.hpp"
#include "core/runtime_partition.hpp"
#include "core/text.hpp"
#include "schedulers/policy_registry.hpp"
#include "schedulers/sim/metrics.hpp"
#include "schedulers/sim/runtime_partitioning.hpp"
#include "schedulers/sim/simulator.hpp"
#include "schedulers/sim/workload_generator.hpp"
#include "schedulers/sim/workload_io.hpp"

namespace chorus::cli {
namespace {

struct Args {
  std::string cluster = "8x4";
  std::string workload;
  std::string queue = "uwfq";
  std::string compare;
  std::string placement = "first-fit";
  std::string weights;
  std::string partition;
  std::string piece_order = "listed";
  std::string state_dir;
  std::string records;
  std::string workload_out;
  std::string grace;
  std::vector<std::string> policy_options;  // --option KEY=VALUE, repeatable
  std::string gen_params;                   // --gen-params (generator_values)
  std::uint64_t seed = 1;
  int seeds = 1;
  double scale = 1;
  bool json = false;
  SimNetworkArgs network;  // --network, --data, --network-out, --rows-out (simulate_network.hpp)
};

[[noreturn]] void fail(const Status& s) {
  print_error(s.message());
  throw CLI::RuntimeError(s.code() == ErrorCode::invalid_argument ||
                                  s.code() == ErrorCode::not_found ||
                                  s.code() == ErrorCode::unsatisfiable
                              ? kExitBadInput
                              : kExitError);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(sep, start);
    std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) out.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// "alice=2,bob=1"
Result<std::map<std::string, double>> parse_weights(const std::string& text) {
  std::map<std::string, double> w;
  for (const auto& item : split(text, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return invalid_argument("--weights: '" + item + "' is not USER=WEIGHT");
    }
    char* end = nullptr;
    std::string num = item.substr(eq + 1);
    double v = std::strtod(num.c_str(), &end);
    if (num.empty() || *end != '\0') {
      return invalid_argument("--weights: '" + num + "' is not a number (in '" + item + "')");
    }
    if (!(v > 0) || !std::isfinite(v)) {
      return invalid_argument("--weights: weight of '" + item.substr(0, eq) +
                              "' must be a positive number, got " + num);
    }
    w[item.substr(0, eq)] = v;
  }
  return w;
}

// The policies of one simulated run. Each gets the options it takes (the workflow's section,
// --weights, --grace): a --compare list gives the weights to those of its policies that take
// them and not to the others, as each policy declares.
Result<SchedulerPolicies> make_policies(const PolicyRegistry& registry, const std::string& queue,
                                        const std::string& placement, const PolicyOptions& options,
                                        const std::map<std::string, double>& job_weights = {}) {
  SchedulerChoice choice;
  choice.queue = queue;
  choice.placement = placement;
  choice.options = registry.options_taken(queue, placement, options);
  PolicyContext context;
  context.job_weights = job_weights;  // the workload's, for the policies that weigh jobs
  return registry.make_policies(choice, context);
}

// A flag (--weights, --grace) that no policy of the run takes is refused rather than dropped:
// a --compare list gives it to those of its policies that take it, but at least one must.
Status check_flags_taken(const PolicyRegistry& registry, const std::vector<std::string>& queues,
                         const std::string& placement, const PolicyOptions& options) {
  auto takes = [](const std::vector<OptionSpec>& specs, const std::string& key) {
    return std::any_of(specs.begin(), specs.end(),
                       [&](const OptionSpec& o) { return o.key == key; });
  };
  for (const auto& e : options.entries) {
    if (e.key_at.in_file() || !e.key_at.source.starts_with("--")) continue;
    if (takes(registry.placement_options(placement), e.key)) continue;
    bool taken = false;
    for (const auto& q : queues) taken = taken || takes(registry.queue_options(q), e.key);
    if (taken) continue;
    const auto others = registry.queues_taking(e.key);
    return invalid_argument(
        e.key_at.source + ": " +
        (queues.size() == 1 ? "queue policy '" + queues.front() + "' takes"
                            : "none of the queue policies " + join(queues) + " takes") +
        " no '" + e.key + "'" + (others.empty() ? "" : " (" + join(others) + " do)"));
  }
  return {};
}

// "--weights alice=2,bob=1" as the option `weights` ({alice: 2, bob: 1}), located at the flag.
OptionEntry weights_option(const std::string& text) {
  const OptionOrigin flag{"--weights"};
  OptionEntry e{"weights", flag, {}, {}};
  e.value.kind = OptionValue::Kind::map;
  e.value.at = flag;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    OptionValue weight;
    weight.text = item.substr(eq + 1);
    weight.at = flag;
    e.value.items.push_back({item.substr(0, eq), flag, std::move(weight), {}});
  }
  return e;
}

bool is_workflow_file(const Args& a) {
  auto ends_with = [&](std::string_view s) {
    return a.workload.size() >= s.size() &&
           a.workload.compare(a.workload.size() - s.size(), s.size(), s) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

// --gen-params "heavy=4,burst_jobs=3": a generator's parameters (workload_generator.hpp).
// Errors: not KEY=NUMBER, a key given twice, the flag without a gen: workload; the generator
// itself refuses keys it does not take and values out of range.
Result<sim::GeneratorValues> generator_values(const Args& a) {
  sim::GeneratorValues values;
  if (a.gen_params.empty()) return values;
  if (a.workload.rfind("gen:", 0) != 0) {
    return invalid_argument("--gen-params: the workload is not a generator (gen:MIX)");
  }
  for (const auto& item : split(a.gen_params, ',')) {
    auto eq = item.find('=');
    std::string key = eq == std::string::npos ? item : item.substr(0, eq);
    std::string num = eq == std::string::npos ? "" : item.substr(eq + 1);
    char* end = nullptr;
    double v = std::strtod(num.c_str(), &end);
    if (key.empty() || num.empty() || *end != '\0') {
      return invalid_argument("--gen-params: '" + item + "' is not KEY=NUMBER");
    }
    if (!values.emplace(key, v).second) {
      return invalid_argument("--gen-params: '" + key + "' is given twice");
    }
  }
  return values;
}

// The flag's help: "key=default" for each parameter of each generator that takes any.
std::string generator_params_help() {
  std::string help = "Generator parameters KEY=NUMBER,...;";
  for (const auto& g : sim::generator_names()) {
    auto params = sim::generator_params(g);
    if (params.empty()) continue;
    help += " " + g + ":";
    for (const auto& p : params) {
      char num[32];
      std::snprintf(num, sizeof num, "%g", p.default_value);
      help += " " + p.key + "=" + num;
    }
    help += ";";
  }
  return help + " see schedulers/sim/workload_generator.hpp";
}

// A generator's workload for `seed`, or a job file's (workflow files are read once, in
// run_simulate: they do not depend on the seed).
Result<sim::Workload> load_workload(const Args& a, std::uint64_t seed) {
  if (a.workload.rfind("gen:", 0) == 0) {
    auto values = generator_values(a);
    if (!values.ok()) return values.status();
    return sim::generate_workload(a.workload.substr(4), seed, a.scale, *values);
  }
  return sim::load_workload_file(a.workload);
}

// NaN values (no job of a class in that run) are left out; all NaN gives NaN.
double median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return std::isnan(x); });
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Field-wise median over seeds.
sim::Metrics median_metrics(const std::vector<sim::Metrics>& runs) {
  sim::Metrics m;
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(static_cast<double>(r.*field));
    return median(v);
  };
  m.jobs = static_cast<std::size_t>(med(&sim::Metrics::jobs));
  m.small_jobs = static_cast<std::size_t>(med(&sim::Metrics::small_jobs));
  m.large_jobs = static_cast<std::size_t>(med(&sim::Metrics::large_jobs));
  m.mean_response_s = med(&sim::Metrics::mean_response_s);
  m.p90_response_s = med(&sim::Metrics::p90_response_s);
  m.worst10_response_s = med(&sim::Metrics::worst10_response_s);
  m.small_mean_response_s = med(&sim::Metrics::small_mean_response_s);
  m.small_mean_alone_s = med(&sim::Metrics::small_mean_alone_s);
  m.small_p90_response_s = med(&sim::Metrics::small_p90_response_s);
  m.large_mean_response_s = med(&sim::Metrics::large_mean_response_s);
  m.large_p90_response_s = med(&sim::Metrics::large_p90_response_s);
  m.mean_slowdown = med(&sim::Metrics::mean_slowdown);
  m.large_mean_slowdown = med(&sim::Metrics::large_mean_slowdown);
  m.jain_users = med(&sim::Metrics::jain_users);
  m.fair_attainment_jain = med(&sim::Metrics::fair_attainment_jain);
  m.fair_attainment_min = med(&sim::Metrics::fair_attainment_min);
  m.deadline_violation_ratio = med(&sim::Metrics::deadline_violation_ratio);
  m.makespan_s = med(&sim::Metrics::makespan_s);
  return m;
}

// The simulator's bound on the tasks of one workload (what the readers allow).
constexpr std::uint64_t kMaxPartitionedTasks = sim::kMaxSimTasks;
constexpr std::uint64_t kMaxPartitionedLinks = 20'000'000;

// --partition splits a divisible task into partition_count() pieces, each waiting for every
// piece of the tasks it waited for: refused before allocating when that would pass the bounds.
Status check_partition_size(const sim::Workload& w, double target_s, const std::string& flag) {
  std::uint64_t tasks = 0, links = 0;
  auto add = [](std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
  };
  auto mul = [](std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
  };
  for (const auto& j : w.jobs) {
    std::vector<std::uint64_t> pieces(j.tasks.size(), 1);
    for (std::size_t k = 0; k < j.tasks.size(); ++k) {
      const sim::SimTask& t = j.tasks[k];
      if (j.divisible) pieces[k] = partition_count(t.runtime_s, target_s);
      tasks = add(tasks, pieces[k]);
      for (auto dep : t.after) links = add(links, mul(pieces[k], pieces[dep]));
      if (tasks > kMaxPartitionedTasks || links > kMaxPartitionedLinks) {
        return invalid_argument(flag + " splits the workload into more than " +
                                std::to_string(kMaxPartitionedTasks) + " tasks or " +
                                std::to_string(kMaxPartitionedLinks) + " dependencies (at job '" +
                                j.id + "' task " + std::to_string(k) + ", " +
                                std::to_string(pieces[k]) + " pieces); use a larger target");
      }
    }
  }
  return {};
}

void run_simulate(const Args& a) {
  const Output out = Output::for_command(a.json);
  auto cluster = sim::parse_cluster(a.cluster);
  if (!cluster.ok()) fail(cluster.status());
  auto weights = parse_weights(a.weights);
  if (!weights.ok()) fail(weights.status());
  if (auto v = generator_values(a); !v.ok()) fail(v.status());  // also for a workflow file
  auto network = SimNetwork::make(a.network, *cluster);
  if (!network.ok()) fail(network.status());
  std::optional<sim::Workload> from_workflow;
  PolicyOptions policy_options;  // the workflow's section's, then the flags'
  if (is_workflow_file(a)) {
    auto w = workflow_workload(a.workload, a.state_dir);
    if (!w.ok()) fail(w.status());
    from_workflow = std::move(w->workload);
    // A workflow's own `scheduler: {weights: ...}`, unless --weights overrides them.
    if (a.weights.empty()) *weights = w->user_weights;
    policy_options = w->policy_options;
    if (!w->services.empty()) {
      std::string names;
      for (const auto& n : w->services) names += (names.empty() ? "" : ", ") + n;
      out.note("services are not simulated (they hold their cores for the whole run): " + names);
    }
  }
  if (!a.weights.empty()) policy_options.set(weights_option(a.weights));
  if (!a.grace.empty()) {
    // Refused here even when no policy of a --compare list takes it.
    auto g = parse_duration(a.grace);
    if (!g.ok()) fail(invalid_argument("--grace: " + g.status().message()));
    policy_options.set(
        {"grace", {"--grace"}, {OptionValue::Kind::scalar, a.grace, {}, {"--grace"}}, {}});
  }
  for (const auto& kv : a.policy_options) {
    // A scalar option for whichever policy of the run takes it (network-aware's model: FILE,
    // random's seed: N), checked by that policy like the same key in a workflow file.
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      fail(invalid_argument("--option: '" + kv +
                            "' is not KEY=VALUE (e.g. --option model=jct.json)"));
    }
    const OptionOrigin flag{"--option " + kv.substr(0, eq)};
    policy_options.set(
        {kv.substr(0, eq), flag, {OptionValue::Kind::scalar, kv.substr(eq + 1), {}, flag}, {}});
  }
  double partition_s = 0;
  if (!a.partition.empty()) {
    auto p = parse_duration(a.partition);
    if (!p.ok() || *p <= Duration::zero()) {
      fail(invalid_argument("--partition: '" + a.partition +
                            "' is not a positive duration (e.g. 0.5s)"));
    }
    partition_s = std::chrono::duration<double>(*p).count();
  }
  auto piece_order = sim::parse_piece_order(a.piece_order);
  if (!piece_order)
    fail(invalid_argument("--piece-order: '" + a.piece_order +
                          "' is not one of listed, interleaved"));
  if (a.seeds < 1) fail(invalid_argument("--seeds must be at least 1"));
  std::vector<std::string> names =
      a.compare.empty() ? std::vector<std::string>{a.queue} : split(a.compare, ',');
  auto registry = PolicyRegistry::with_builtins();
  for (const auto& n : names) {
    auto p = make_policies(registry, n, a.placement, policy_options);
    if (!p.ok()) fail(p.status());
  }
  if (Status s = check_flags_taken(registry, names, a.placement, policy_options); !s.ok()) fail(s);

  sim::SimOptions options;
  options.user_weights = *weights;
  std::map<std::string, std::vector<sim::Metrics>> by_policy;
  std::vector<sim::SimResult> records;
  std::string workload_name;
  std::size_t jobs = 0, tasks = 0;
  for (int s = 0; s < a.seeds; ++s) {
    auto workload = from_workflow ? Result<sim::Workload>(*from_workflow)
                                  : load_workload(a, a.seed + static_cast<std::uint64_t>(s));
    if (!workload.ok()) fail(workload.status());
    if (partition_s > 0) {
      if (Status st = check_partition_size(*workload, partition_s, "--partition " + a.partition);
          !st.ok()) {
        fail(st);
      }
    }
    sim::Workload w = partition_s > 0
                          ? sim::partition_divisible(*workload, partition_s, *piece_order)
                          : std::move(*workload);
    if (*network) {
      if (Status st = (*network)->prepare(w); !st.ok()) fail(st);
    }
    if (!a.workload_out.empty() && s == 0) {
      auto text = sim::workload_json(w);
      if (!text.ok()) fail(text.status());
      if (Status st = sim::write_text_file(a.workload_out, *text); !st.ok()) fail(st);
    }
    workload_name = w.name;
    jobs = w.jobs.size();
    tasks = w.task_count();
    std::map<std::string, double> job_weights;
    for (const auto& j : w.jobs) {
      if (j.weight != 1) job_weights[j.id] = j.weight;
    }
    for (const auto& n : names) {
      auto policies = make_policies(registry, n, a.placement, policy_options, job_weights);
      if (!policies.ok()) fail(policies.status());
      if (*network)
        (*network)->attach(options, n + "/" + a.placement + "/seed" + std::to_string(a.seed + s));
      auto run = sim::simulate(w, *cluster, *policies->queue, *policies->placement, options);
      if (!run.ok()) fail(run.status());
      if (*network) (*network)->collect();
      by_policy[n].push_back(sim::compute_metrics(*run, cluster->total_cores(), *weights));
      if (!a.records.empty() && s == 0) records.push_back(std::move(*run));
    }
  }
  if (*network) {
    if (Status st = (*network)->finish(); !st.ok()) fail(st);
  }
  if (!a.records.empty()) {
    bool json = a.records.size() >= 5 && a.records.compare(a.records.size() - 5, 5, ".json") == 0;
    if (Status st = sim::write_text_file(
            a.records, json ? sim::records_json(records) : sim::records_csv(records));
        !st.ok()) {
      fail(st);
    }
  }

  SimulationTable table{workload_name,
                        jobs,
                        tasks,
                        a.cluster,
                        cluster->total_cores(),
                        a.seeds,
                        a.seed,
                        partition_s > 0 ? a.partition : "",
                        {}};
  std::vector<sim::Metrics> medians;
  medians.reserve(names.size());
  for (const auto& n : names) medians.push_back(median_metrics(by_policy[n]));
  for (std::size_t i = 0; i < names.size(); ++i) table.policies.emplace_back(names[i], &medians[i]);
  out.simulation(table);
}

void add_simulate_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("simulate", "Replay a workload through queue policies in simulated time");
  auto args = std::make_shared<Args>();
  // The policies that take an option, from the registry (a new policy shows up by itself).
  const auto registry = PolicyRegistry::with_builtins();
  auto takers = [&registry](const char* key) { return join(registry.queues_taking(key)); };
  cmd->add_option("--workload,-w", args->workload,
                  "A job file (.json/.csv), a workflow (.yaml) or gen:MIX (" +
                      join(sim::generator_names()) + ")")
      ->required();
  cmd->add_option("--cluster", args->cluster, "NODESxCORES, groups joined by '+'")
      ->capture_default_str();
  cmd->add_option("--queue", args->queue, "Queue policy")->capture_default_str();
  cmd->add_option("--compare", args->compare, "Comma-separated queue policies to run side by side");
  cmd->add_option("--placement", args->placement, "Placement policy")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Generator seed (the first, with --seeds)")
      ->capture_default_str();
  cmd->add_option("--seeds", args->seeds, "Number of seeds; metrics are medians over them")
      ->capture_default_str();
  cmd->add_option("--scale", args->scale, "Multiply a generator's job counts")
      ->capture_default_str();
  cmd->add_option("--partition", args->partition,
                  "Split divisible jobs into tasks of about this runtime (e.g. 0.5s)");
  cmd->add_option("--piece-order", args->piece_order,
                  "How --partition lists a job's pieces: listed (each task's together) or "
                  "interleaved (round-robin over the job's tasks)")
      ->capture_default_str();
  cmd->add_option(
      "--weights", args->weights,
      "User weights, USER=W,... (" + takers("weights") + "; default: a workflow's own)");
  cmd->add_option("--state", args->state_dir,
                  "State folder whose journal gives a workflow's tasks without an estimate their "
                  "past runtimes (default: .chorus)");
  cmd->add_option("--gen-params", args->gen_params, generator_params_help());
  cmd->add_option("--grace", args->grace,
                  "Grace period for returning users, e.g. 1s (" + takers("grace") + ")");
  cmd->add_option("--option", args->policy_options,
                  "A policy option KEY=VALUE, as in a workflow's scheduler section (e.g. "
                  "model=jct.json for network-aware, seed=3 for random); repeatable");
  cmd->add_option("--workload-out", args->workload_out,
                  "Write the workload the policies ran (first seed; generated, scaled and "
                  "partitioned) to FILE.json, readable by --workload");
  cmd->add_option("--records", args->records,
                  "Write per-job records (first seed) to FILE.csv or FILE.json");
  cmd->add_flag("--json", args->json, "Print one JSON object keyed by policy");
  add_network_options(*cmd, args->network);
  cmd->callback([args] { run_simulate(*args); });
}

const CommandRegistrar registrar{"simulate", add_simulate_command};

}  // namespace
}  // namespace chorus::cli
