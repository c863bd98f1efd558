#include "schedulers/netaware/training/xgb_model.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

namespace chorus {
namespace {

Status xgb_error(std::string_view what) {
  return internal_error("XGBoost " + std::string(what) + ": " + XGBGetLastError());
}

// A dense row-major copy of the rows' features (NaN stays NaN: XGBoost's missing value).
std::vector<float> dense(std::span<const FeatureVector> rows) {
  std::vector<float> out;
  out.reserve(rows.size() * kFeatureCount);
  for (const FeatureVector& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

struct DMatrix {
  DMatrixHandle h = nullptr;
  DMatrix() = default;
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  ~DMatrix() {
    if (h != nullptr) XGDMatrixFree(h);
  }
};

Status make_matrix(std::span<const FeatureVector> rows, DMatrix& out) {
  const std::vector<float> values = dense(rows);
  if (XGDMatrixCreateFromMat(values.data(), rows.size(), kFeatureCount,
                             std::numeric_limits<float>::quiet_NaN(), &out.h) != 0) {
    return xgb_error("could not build the training matrix");
  }
  return {};
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

struct XgbModel::Impl {
  BoosterHandle booster = nullptr;
  ModelTarget target = ModelTarget::log_seconds;
  ~Impl() {
    if (booster != nullptr) XGBoosterFree(booster);
  }
};

XgbModel::XgbModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
XgbModel::~XgbModel() = default;
XgbModel::XgbModel(XgbModel&&) noexcept = default;
XgbModel& XgbModel::operator=(XgbModel&&) noexcept = default;

ModelTarget XgbModel::target() const {
  return impl_->target;
}

Result<XgbModel> XgbModel::train(std::span<const TrainingRow> rows, const TrainOptions& options) {
  if (rows.empty()) return invalid_argument("no training rows");
  std::vector<FeatureVector> x;
  std::vector<float> y;
  x.reserve(rows.size());
  y.reserve(rows.size());
  double sum = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double s = rows[i].seconds;
    if (!std::isfinite(s) || s <= 0) {
      return invalid_argument("training row " + std::to_string(i + 1) + " (run " + rows[i].run +
                              "): seconds must be positive and finite, got " + number(s));
    }
    double t = s;
    if (options.target == ModelTarget::log_seconds) t = std::log(s);
    if (options.target == ModelTarget::log_ratio) {
      const double a = rows[i].features[static_cast<std::size_t>(Feature::analytic_s)];
      if (!(a > 0) || !std::isfinite(a)) continue;  // no estimate to correct
      t = std::log(s / a);
    }
    x.push_back(rows[i].features);
    y.push_back(static_cast<float>(t));
    sum += t;
  }
  if (y.empty()) {
    return invalid_argument(
        "no training row has an analytic estimate (analytic_s), which the "
        "log_ratio target corrects; use --target log_seconds");
  }
  // Quiet: XGBoost's warnings would go to our stderr in the middle of a command's output.
  XGBSetGlobalConfig(R"({"verbosity": 0})");
  DMatrix m;
  if (Status st = make_matrix(x, m); !st.ok()) return st;
  if (XGDMatrixSetFloatInfo(m.h, "label", y.data(), y.size()) != 0) {
    return xgb_error("could not set the labels");
  }
  auto impl = std::make_unique<Impl>();
  impl->target = options.target;
  if (XGBoosterCreate(&m.h, 1, &impl->booster) != 0) return xgb_error("could not create a booster");
  // base_score = the mean target: the trees then learn the deviations from it (XGBoost 1.7 does
  // not estimate it; its default 0.5 would cost the first trees to walk there).
  const std::pair<const char*, std::string> params[] = {
      {"objective", "reg:squarederror"},
      {"tree_method", "hist"},
      {"nthread", "1"},
      {"seed", std::to_string(options.seed)},
      {"seed_per_iteration", "1"},
      {"max_depth", std::to_string(options.max_depth)},
      {"eta", number(options.eta)},
      {"subsample", number(options.subsample)},
      {"base_score", number(static_cast<float>(sum / static_cast<double>(y.size())))},
      {"verbosity", "0"},
  };
  for (const auto& [key, value] : params) {
    if (XGBoosterSetParam(impl->booster, key, value.c_str()) != 0) {
      return xgb_error(std::string("refused the parameter ") + key + "=" + value);
    }
  }
  for (int i = 0; i < options.rounds; ++i) {
    if (XGBoosterUpdateOneIter(impl->booster, i, m.h) != 0) {
      return xgb_error("failed at round " + std::to_string(i + 1));
    }
  }
  return XgbModel(std::move(impl));
}

Result<std::vector<double>> XgbModel::predict_s(std::span<const FeatureVector> rows) const {
  std::vector<double> out;
  if (rows.empty()) return out;
  DMatrix m;
  if (Status st = make_matrix(rows, m); !st.ok()) return st;
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDMatrix(impl_->booster, m.h, config, &shape, &dim, &result) != 0) {
    return xgb_error("could not predict");
  }
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.push_back(seconds_from(impl_->target, result[i], rows[i]));
  }
  return out;
}

Result<std::string> XgbModel::model_file(const TrainedOn& trained_on) const {
  // base_score as the booster holds it (a float; for reg:squarederror the margin is the score).
  bst_ulong len = 0;
  const char* config = nullptr;
  if (XGBoosterSaveJsonConfig(impl_->booster, &len, &config) != 0) {
    return xgb_error("could not report its configuration");
  }
  double base_score = 0;
  try {
    const auto cfg = nlohmann::json::parse(std::string_view(config, len));
    const std::string text = cfg.at("learner").at("learner_model_param").at("base_score");
    base_score = static_cast<float>(std::strtod(text.c_str(), nullptr));
  } catch (const nlohmann::json::exception& e) {
    return internal_error(std::string("XGBoost's configuration has no base_score: ") + e.what());
  }

  const auto names = feature_names();
  std::vector<std::string> name_text(names.begin(), names.end());
  std::vector<const char*> fname;
  std::vector<const char*> ftype;
  for (const std::string& n : name_text) {
    fname.push_back(n.c_str());
    ftype.push_back("q");  // quantitative: splits print their float threshold
  }
  bst_ulong trees = 0;
  const char** dump = nullptr;
  if (XGBoosterDumpModelExWithFeatures(impl_->booster, static_cast<int>(fname.size()), fname.data(),
                                       ftype.data(), /*with_stats=*/0, "json", &trees,
                                       &dump) != 0) {
    return xgb_error("could not dump the trees");
  }
  nlohmann::ordered_json file;
  file["format"] = "chorus-jct-model";
  file["version"] = 1;
  file["features"] = name_text;
  file["target"] = std::string(to_string(impl_->target));
  file["base_score"] = base_score;
  auto& array = file["trees"] = nlohmann::ordered_json::array();
  try {
    for (bst_ulong i = 0; i < trees; ++i) array.push_back(nlohmann::ordered_json::parse(dump[i]));
  } catch (const nlohmann::json::exception& e) {
    return internal_error(std::string("a tree of XGBoost's dump is not JSON: ") + e.what());
  }
  file["trained_on"] = {
      {"rows", trained_on.rows}, {"runs", trained_on.runs}, {"created", trained_on.created}};
  return file.dump(1) + "\n";
}

}  // namespace chorus
