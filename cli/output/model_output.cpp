// Output's forms of `chorus model train`.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/output/output.hpp"

namespace chorus::cli {

void Output::model_trained(const ModelTrainReport& r) const {
  if (json()) {
    nlohmann::ordered_json j{{"output", r.output},
                             {"target", r.target},
                             {"trees", r.trees},
                             {"rows", r.rows},
                             {"runs", r.runs},
                             {"train", {{"rows", r.train_rows}, {"runs", r.train_runs}}},
                             {"holdout", {{"rows", r.holdout_rows}, {"runs", r.holdout_runs}}}};
    if (r.holdout_rows > 0) {
      j["holdout"]["model"] = {
          {"rows", r.model_scored}, {"mae_s", r.model_mae_s}, {"mape", r.model_mape}};
      j["holdout"]["analytic"] = {
          {"rows", r.analytic_scored}, {"mae_s", r.analytic_mae_s}, {"mape", r.analytic_mape}};
    }
    json_document(j);
    return;
  }
  std::fprintf(out(), "%s: %zu trees (target %s), trained on %zu rows from %zu runs\n",
               r.output.c_str(), r.trees, r.target.c_str(), r.rows, r.runs);
  if (r.holdout_rows == 0) {
    std::fprintf(out(),
                 "holdout: none (one run: the split is by whole runs; give two or more for a "
                 "holdout figure)\n");
    return;
  }
  std::fprintf(out(),
               "split by run: %zu rows from %zu runs to fit, %zu rows from %zu runs held out\n",
               r.train_rows, r.train_runs, r.holdout_rows, r.holdout_runs);
  if (r.model_scored == r.holdout_rows) {
    std::fprintf(out(), "holdout: model MAE %.3g s, MAPE %.1f%%\n", r.model_mae_s,
                 r.model_mape * 100);
  } else {
    // log_ratio predicts nothing where there is no analytic estimate to correct: say on how
    // many rows its figure stands, as for the analytic estimate's below.
    std::fprintf(out(), "holdout: model MAE %.3g s, MAPE %.1f%% (%zu of %zu rows predicted)\n",
                 r.model_mae_s, r.model_mape * 100, r.model_scored, r.holdout_rows);
  }
  if (r.analytic_scored > 0) {
    std::fprintf(
        out(), "holdout: analytic estimate MAE %.3g s, MAPE %.1f%% (%zu of %zu rows computable)\n",
        r.analytic_mae_s, r.analytic_mape * 100, r.analytic_scored, r.holdout_rows);
  } else {
    std::fprintf(out(), "holdout: analytic estimate not computable on any row\n");
  }
  std::fprintf(out(), "(the file is a model fitted on all %zu rows)\n", r.rows);
}

}  // namespace chorus::cli
