// `chorus simulate-quorum`'s result (cli/output/quorum_output.cpp): per policy of a --compare
// list, medians over the seeds of the round simulator's runs (schedulers/quorum/sgd/
// round_simulator.hpp). Plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chorus::cli {

struct QuorumPolicyRow {
  std::string label;  // as written in --compare, a range expanded ("static:b=4")
  int runs = 0;       // seeds run
  int reached = 0;    // seeds that reached the target loss
  // Medians over the seeds; a seed that did not reach the target counts as infinitely slow, so
  // the median time is infinite ("not reached") when fewer than half reached it.
  double median_time_s = 0;
  double median_rounds = 0;  // rounds to target (or run, when not reached)
  double median_mean_k = 0;  // results used per round
  double median_final_loss = 0;
  double policy_ns_per_call = 0;  // median over the seeds of the mean policy call
  std::vector<double> times_s;    // per seed, in seed order; infinite when not reached
};

struct QuorumSimTable {
  std::string workload;  // Workload::name()
  std::string scenario;  // "S2 pareto"
  std::string mode;      // "interrupt" | "timed"
  int n = 0;
  int batch = 0;
  double learning_rate = 0;
  double overhead_s = 0;
  int switch_at = 0;  // S5/S6's iteration of the change, as resolved
  int seeds = 1;
  std::uint64_t first_seed = 1;
  int max_iterations = 0;
  double initial_loss = 0;
  double optimum_loss = 0;
  double target_loss = 0;
  std::vector<QuorumPolicyRow> policies;  // in the order asked
};

}  // namespace chorus::cli
