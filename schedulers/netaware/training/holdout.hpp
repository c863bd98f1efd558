// Holdout evaluation of a completion-time model: rows split by whole runs (never by rows: rows of
// one run share its background schedule, and a model that saw a run's neighbours would look
// better than it will be on the next run), and its error on the held-out runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "schedulers/netaware/training/training_row.hpp"
#include "schedulers/netaware/tree_model.hpp"

namespace chorus {

struct RunSplit {
  std::vector<TrainingRow> train;
  std::vector<TrainingRow> holdout;
  std::size_t train_runs = 0;
  std::size_t holdout_runs = 0;
};

// A seeded choice of round(fraction x runs) runs, at least one when there are two or more runs
// and at most all but one; with a single run everything is training and the holdout is empty.
RunSplit split_by_run(std::span<const TrainingRow> rows, double holdout_fraction,
                      std::uint64_t seed);

std::size_t count_runs(std::span<const TrainingRow> rows);

struct HoldoutError {
  std::size_t rows = 0;
  double mae_s = 0;        // mean |predicted - measured|, seconds
  double mape = 0;         // mean |predicted - measured| / measured, a fraction
  std::size_t scored = 0;  // rows with a prediction (the analytic estimate can be NaN)
};

HoldoutError holdout_error(const TreeModel& model, std::span<const TrainingRow> rows);
// The same for the analytic estimate alone (the `analytic_s` feature), the model's baseline.
HoldoutError analytic_error(std::span<const TrainingRow> rows);

}  // namespace chorus
