// `chorus simulate-quorum` (cli/cmd_simulate_quorum.cpp): the table of times to the target loss,
// or one JSON document with the per-seed times (what bench/dbw/run_targets.py reads).
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/output/output.hpp"

namespace chorus::cli {
namespace {

// JSON has no infinity: "not reached" is null.
nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

void Output::quorum_simulation(const QuorumSimTable& t) const {
  if (json()) {
    nlohmann::ordered_json j{{"workload", t.workload},
                             {"scenario", t.scenario},
                             {"mode", t.mode},
                             {"n", t.n},
                             {"batch", t.batch},
                             {"learning_rate", t.learning_rate},
                             {"overhead_s", t.overhead_s},
                             {"switch_at", t.switch_at},
                             {"seeds", t.seeds},
                             {"first_seed", t.first_seed},
                             {"max_iterations", t.max_iterations},
                             {"initial_loss", t.initial_loss},
                             {"optimum_loss", finite_or_null(t.optimum_loss)},
                             {"target_loss", t.target_loss}};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const QuorumPolicyRow& r : t.policies) {
      nlohmann::ordered_json times = nlohmann::ordered_json::array();
      for (double s : r.times_s) times.push_back(finite_or_null(s));
      rows.push_back({{"policy", r.label},
                      {"runs", r.runs},
                      {"reached", r.reached},
                      {"median_time_s", finite_or_null(r.median_time_s)},
                      {"median_rounds", r.median_rounds},
                      {"median_mean_k", r.median_mean_k},
                      {"median_final_loss", r.median_final_loss},
                      {"policy_ns_per_call", r.policy_ns_per_call},
                      {"times_s", times}});
    }
    j["policies"] = rows;
    json_document(j);
    return;
  }
  std::fprintf(out_,
               "workload %s; scenario %s; %s mode; n %d, batch %d, lr %g, overhead %gs; %d seed%s "
               "from %llu\n",
               t.workload.c_str(), t.scenario.c_str(), t.mode.c_str(), t.n, t.batch,
               t.learning_rate, t.overhead_s, t.seeds, t.seeds == 1 ? "" : "s (medians)",
               static_cast<unsigned long long>(t.first_seed));
  if (std::isnan(t.optimum_loss)) {
    std::fprintf(out_, "target loss %.5f (given; F(w0) %.5f)\n", t.target_loss, t.initial_loss);
  } else {
    std::fprintf(out_, "target loss %.5f = F* %.5f + %.0f%% of (F(w0) %.5f - F*)\n", t.target_loss,
                 t.optimum_loss,
                 t.initial_loss > t.optimum_loss
                     ? 100 * (t.target_loss - t.optimum_loss) / (t.initial_loss - t.optimum_loss)
                     : 0.0,
                 t.initial_loss);
  }
  std::fprintf(out_, "%-22s %12s %9s %8s %7s %9s %10s %9s\n", "policy", "time to tgt", "vs first",
               "reached", "rounds", "mean k", "final loss", "ns/call");
  const double first = t.policies.empty() ? 0 : t.policies.front().median_time_s;
  for (const QuorumPolicyRow& r : t.policies) {
    char time[32];
    char ratio[32];
    if (std::isfinite(r.median_time_s)) {
      std::snprintf(time, sizeof time, "%11.3fs", r.median_time_s);
    } else {
      std::snprintf(time, sizeof time, "%12s", "not reached");
    }
    if (std::isfinite(r.median_time_s) && std::isfinite(first) && r.median_time_s > 0) {
      std::snprintf(ratio, sizeof ratio, "%8.2fx", first / r.median_time_s);
    } else {
      std::snprintf(ratio, sizeof ratio, "%9s", "-");
    }
    std::fprintf(out_, "%-22s %s %s %4d/%-3d %7.0f %9.2f %10.5f %9.0f\n", r.label.c_str(), time,
                 ratio, r.reached, r.runs, r.median_rounds, r.median_mean_k, r.median_final_loss,
                 r.policy_ns_per_call);
  }
  std::fprintf(out_,
               "(vs first: the first policy's median time / this one's; above 1 is faster)\n");
}

}  // namespace chorus::cli
