// Training the completion-time model with XGBoost's C API, and writing the model file that
// TreeModel (schedulers/netaware/tree_model.hpp) evaluates in the decision loop.
//
// Training: objective reg:squarederror on the target (log_seconds by default, docs/jct-model.md
// says why), tree_method hist, one thread, seeded, NaN = missing; the same rows and options give
// the same model file byte for byte (but `trained_on.created`, which the caller passes).
//
// The model file (JSON):
//   {"format": "chorus-jct-model", "version": 1, "features": [feature_names()...],
//    "target": "log_seconds" | "seconds" | "log_ratio", "base_score": <float>, "trees": [<XGBoost's
//    JSON dump of each tree, stats off>], "trained_on": {"rows", "runs", "created"}}
// A prediction is float(base_score) + the float sum of one leaf per tree, in tree order (as
// XGBoost's CPU predictor adds them), then exp() for log_seconds, and exp() times the row's
// analytic_s for log_ratio.
//
// log_ratio fits log(seconds / analytic_s): the trees learn the analytic estimate's error, in
// ratio, instead of the whole time. With few rows (a bed's 200) trees cannot rebuild a smooth
// function of bytes, rates and CPU that the analytic estimate already is; they can learn where it
// is biased. Rows without an analytic estimate (NaN or not positive) are left out of the fit, and
// such a row's prediction is NaN (the policy then has no estimate for it, as without a model).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "schedulers/netaware/training/training_row.hpp"
#include "schedulers/netaware/tree_model.hpp"  // ModelTarget

namespace chorus {

struct TrainOptions {
  ModelTarget target = ModelTarget::log_seconds;
  int rounds = 300;  // trees
  int max_depth = 6;
  double eta = 0.1;  // learning rate
  double subsample = 1.0;
  std::uint64_t seed = 1;
};

struct TrainedOn {
  std::size_t rows = 0;
  std::size_t runs = 0;
  std::string created;  // ISO 8601 UTC, from the caller (training itself reads no clock)
};

// A trained booster (XGBoost's handle, freed on destruction).
class XgbModel {
 public:
  ~XgbModel();
  XgbModel(XgbModel&&) noexcept;
  XgbModel& operator=(XgbModel&&) noexcept;

  // Errors: invalid_argument for no rows, a row whose seconds is not positive and finite, or
  // (log_ratio) no row with an analytic estimate; internal with XGBoost's own message when the
  // library refuses.
  static Result<XgbModel> train(std::span<const TrainingRow> rows, const TrainOptions& options);

  // XGBoost's own predictions (XGBoosterPredictFromDMatrix), in seconds (exp() of the raw output
  // for log_seconds): what the equality test compares TreeModel with.
  Result<std::vector<double>> predict_s(std::span<const FeatureVector> rows) const;

  // The model file text (format above).
  Result<std::string> model_file(const TrainedOn& trained_on) const;

  ModelTarget target() const;

 private:
  struct Impl;
  explicit XgbModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus
