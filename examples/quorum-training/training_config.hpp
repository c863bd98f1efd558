// What one live training run is: the workload, the quorum policy, the mode and the straggler
// scenario. The PS takes it from its flags and writes it to <state>/training.json (atomically,
// before it announces its endpoint); the workers read it there, so the YAML names the run's
// settings once, on the PS's line, and every replica computes the same gradients and delays.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "examples/quorum-training/frames.hpp"
#include "schedulers/quorum/sgd/scenario.hpp"
#include "schedulers/quorum/sgd/workload.hpp"

namespace quorum_training {

struct TrainingConfig {
  std::string workload = "logistic";  // logistic | digits
  int dim = 100;                      // logistic only
  int samples = 4000;                 // logistic only
  double l2 = 1e-4;
  std::uint64_t data_seed = 1;
  int batch = 64;  // samples per worker per round
  double learning_rate = 0.5;
  int n = 4;  // workers
  Mode mode = Mode::interrupt;
  std::string policy = "wait-all";
  std::map<std::string, std::string> policy_options;  // "b" -> "2"
  std::string scenario = "S0";
  chorus::sgd::ScenarioParams trace;  // base_s, tail_s, ... (scenario filled from `scenario`)
  std::uint64_t trace_seed = 1;
  int max_rounds = 200;
  double target_loss = 0;    // 0: run max_rounds
  double timed_grace_s = 2;  // timed mode: how long a round's end waits for its late gradients
  int checkpoint_every = 1;  // rounds between checkpoints
  // Workers send the secant curvature along their last step with each gradient (a second
  // gradient pass on the same batch at their previous weights), which dbw/dbw+/adasync read as
  // L; the round simulator's --curvature. Off: they fall back to L = 1 / eta.
  bool curvature_probe = false;
};

// Errors: invalid_argument naming the field (an unknown workload or scenario, n < 1, ...).
chorus::Status validate(const TrainingConfig& config);

std::string to_json(const TrainingConfig& config);
// Errors: invalid_argument naming `source` and the field.
chorus::Result<TrainingConfig> config_from_json(const std::string& text, const std::string& source);

// The workload the config names (the digits data from chorus::sgd::default_digits_path()).
chorus::Result<std::unique_ptr<chorus::sgd::Workload>> make_workload(const TrainingConfig& config);

// The scenario's service times for n workers x max_rounds, [round0 * n + worker] (the
// simulator's chorus::sgd::service_times with the same seed: live and simulated delays agree).
std::vector<double> trace_delays(const TrainingConfig& config);

// The sample indices worker `worker` uses in `round` (1-based): a hash of (trace_seed, round,
// worker, j), the round simulator's own draw, so a restarted worker, a rerun and the simulator
// pick the same ones; fills `out` (batch entries).
void batch_for(const TrainingConfig& config, std::size_t samples, int round, int worker,
               std::span<std::uint32_t> out);

// Writes `text` to `path` through `path`.tmp + fsync + rename: a reader sees the old file or
// the new one, never half of one. Errors: io_error with the OS's words.
chorus::Status write_atomically(const std::string& path, const std::string& text);

}  // namespace quorum_training
