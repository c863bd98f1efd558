// A completion-time model: gradient-boosted trees trained by `chorus model train` (XGBoost's C
// API, at training time only) and evaluated here by a small evaluator of ours, because XGBoost's
// own prediction costs 174-263 us per call on these machines, too slow for the decision loop.
// Tested equal to XGBoost's predictions (1e-5 on 10k rows).
//
// The model file (JSON, written by the trainer; docs/jct-model.md describes it) names the
// features it was trained on; load() refuses a file that is not a model, or one trained on other
// features than feature_names() lists, with an error naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "schedulers/netaware/features.hpp"

namespace chorus {

// What a model's trees fit (the file's "target"), and so how their sum becomes seconds:
// log_seconds exp(sum); seconds the sum; log_ratio exp(sum) times the row's analytic_s (the trees
// correct the analytic estimate; no prediction, NaN, where it is not positive).
enum class ModelTarget : std::uint8_t { log_seconds, seconds, log_ratio };
std::string_view to_string(ModelTarget target);
// "log_seconds", "seconds", "log_ratio"; nullopt for anything else.
std::optional<ModelTarget> parse_model_target(std::string_view text);
// Seconds from the trees' raw sum for the row `x`: the one place the targets' meaning lives
// (TreeModel and the trainer's XGBoost predictions both use it).
double seconds_from(ModelTarget target, double raw, const FeatureVector& x);

class TreeModel {
 public:
  ~TreeModel();
  TreeModel(TreeModel&&) noexcept;
  TreeModel& operator=(TreeModel&&) noexcept;

  // Errors: invalid_argument / io_error naming `path` and what is wrong ("not a chorus model",
  // "trained on features [...], this build has [...]", a malformed tree at a position).
  static Result<TreeModel> load(const std::string& path);
  static Result<TreeModel> parse(std::string_view json, const std::string& path_for_messages);

  // Predicted completion time in seconds for one feature vector (NaN features follow each
  // split's default direction, as XGBoost's do). Allocation-free, thread-compatible.
  double predict_s(const FeatureVector& x) const;

  std::size_t tree_count() const;
  const std::string& path() const;

 private:
  struct Impl;
  explicit TreeModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus
