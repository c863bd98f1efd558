#include "cli/model/train_model.hpp"

#include "schedulers/netaware/training/holdout.hpp"
#include "schedulers/netaware/tree_model.hpp"

namespace chorus::cli {

Result<TrainedFile> train_model(std::span<const TrainingRow> rows, const ModelTrainOptions& options,
                                const std::string& output_path) {
  if (rows.size() < options.min_rows) {
    return invalid_argument("too few training rows: found " + std::to_string(rows.size()) +
                            ", needs at least " + std::to_string(options.min_rows) +
                            " (run more data tasks under network-aware placement, add --rows "
                            "files, or lower --min-rows)");
  }
  TrainedFile out;
  ModelTrainReport& r = out.report;
  r.output = output_path;
  r.target = std::string(to_string(options.train.target));
  r.rows = rows.size();
  r.runs = count_runs(rows);
  r.trees = static_cast<std::size_t>(options.train.rounds);

  const RunSplit split = split_by_run(rows, options.holdout, options.split_seed);
  r.train_rows = split.train.size();
  r.train_runs = split.train_runs;
  r.holdout_rows = split.holdout.size();
  r.holdout_runs = split.holdout_runs;
  if (!split.holdout.empty()) {
    auto fitted = XgbModel::train(split.train, options.train);
    if (!fitted.ok()) return fitted.status();
    auto text = fitted->model_file({split.train.size(), split.train_runs, options.created});
    if (!text.ok()) return text.status();
    // Scored by our evaluator, as the policy will score: the figure is the deployed model's.
    auto model = TreeModel::parse(*text, output_path + " (holdout fit)");
    if (!model.ok()) return model.status();
    const HoldoutError m = holdout_error(*model, split.holdout);
    const HoldoutError a = analytic_error(split.holdout);
    r.model_mae_s = m.mae_s;
    r.model_mape = m.mape;
    r.model_scored = m.scored;
    r.analytic_scored = a.scored;
    r.analytic_mae_s = a.mae_s;
    r.analytic_mape = a.mape;
  }
  auto final_model = XgbModel::train(rows, options.train);
  if (!final_model.ok()) return final_model.status();
  auto text = final_model->model_file({rows.size(), r.runs, options.created});
  if (!text.ok()) return text.status();
  out.text = std::move(*text);
  return out;
}

}  // namespace chorus::cli
