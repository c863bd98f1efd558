// What `chorus model train` does once it has rows: check there are enough, fit on the training
// runs and measure the holdout error (split by whole runs), then fit the model it writes on all
// rows. No journal here (cmd_model.cpp gathers the rows), so tests drive it directly.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cli/output/results.hpp"
#include "core/status.hpp"
#include "schedulers/netaware/training/training_row.hpp"
#include "schedulers/netaware/training/xgb_model.hpp"

namespace chorus::cli {

struct ModelTrainOptions {
  TrainOptions train;
  double holdout = 0.25;      // the fraction of runs held out
  std::size_t min_rows = 50;  // fewer rows are refused: 21 features need more than a handful
  std::uint64_t split_seed = 1;
  std::string created;  // ISO 8601 UTC, the caller's clock
};

struct TrainedFile {
  std::string text;  // the model file
  ModelTrainReport report;
};

// Errors: invalid_argument for too few rows (how many there are, how many are needed); XGBoost's
// refusals as internal.
Result<TrainedFile> train_model(std::span<const TrainingRow> rows, const ModelTrainOptions& options,
                                const std::string& output_path);

}  // namespace chorus::cli
