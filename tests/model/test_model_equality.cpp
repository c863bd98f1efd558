// The completion-time model end to end: trained with XGBoost's C API
// (schedulers/netaware/training/), written as a model file, read back by TreeModel, and TreeModel's
// predictions equal to XGBoost's own on 10,000 rows (NaNs included, and values exactly on split
// thresholds, where `<` against `<=` would show).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "schedulers/netaware/training/xgb_model.hpp"
#include "schedulers/netaware/tree_model.hpp"

namespace chorus {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Rows shaped like the real ones: times from bytes / bandwidth + RTT x round trips + CPU / share,
// with multiplicative noise, and a tenth of the telemetry missing.
std::vector<TrainingRow> synthetic_rows(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<TrainingRow> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    FeatureVector& x = rows[i].features;
    for (float& v : x) v = u(gen) * 100;
    const float in = 1 + u(gen) * 200;
    const float down = 10 + u(gen) * 190;
    const float rtt = 1 + u(gen) * 50;
    const float cpu = u(gen) * 5;
    const float share = 0.25f + u(gen) * 0.75f;
    x[static_cast<std::size_t>(Feature::input_mb)] = in;
    x[static_cast<std::size_t>(Feature::down_mbps)] = down;
    x[static_cast<std::size_t>(Feature::rtt_from_ms)] = rtt;
    x[static_cast<std::size_t>(Feature::cpu_s)] = cpu;
    x[static_cast<std::size_t>(Feature::cpu_share)] = share;
    const double t = transfer_s(in * 1e6, down * 1e6 / 8, rtt / 1e3, rtt / 1e3) + cpu / share;
    x[static_cast<std::size_t>(Feature::analytic_s)] = static_cast<float>(t);
    for (float& v : x) {
      if (u(gen) < 0.1f) v = kNaN;
    }
    rows[i].seconds = (t + 0.05) * (0.9 + 0.2 * u(gen));
    rows[i].run = "run" + std::to_string(i % 7);
  }
  return rows;
}

// 10,000 rows to predict: fresh ones, and a fifth with a feature set exactly on a split threshold
// of the model (or its float neighbour below).
std::vector<FeatureVector> probe_rows(const nlohmann::json& model, std::uint32_t seed) {
  std::vector<std::pair<std::size_t, float>> thresholds;
  std::vector<const nlohmann::json*> stack;
  for (const auto& t : model["trees"]) stack.push_back(&t);
  const auto names = feature_names();
  while (!stack.empty()) {
    const nlohmann::json& n = *stack.back();
    stack.pop_back();
    if (!n.contains("split")) continue;
    const auto f = std::find(names.begin(), names.end(), n["split"].get<std::string>());
    thresholds.emplace_back(static_cast<std::size_t>(f - names.begin()),
                            static_cast<float>(n["split_condition"].get<double>()));
    for (const auto& c : n["children"]) stack.push_back(&c);
  }
  REQUIRE_FALSE(thresholds.empty());
  std::vector<FeatureVector> out;
  for (const TrainingRow& r : synthetic_rows(10'000, seed)) out.push_back(r.features);
  std::mt19937 gen(seed + 1);
  for (std::size_t i = 0; i < out.size(); i += 5) {
    const auto& [f, value] = thresholds[gen() % thresholds.size()];
    out[i][f] = (i / 5) % 2 == 0 ? value : std::nextafter(value, -1e30f);
  }
  return out;
}

struct Compared {
  double max_abs = 0;
  double max_rel = 0;
};

Compared compare(ModelTarget target) {
  TrainOptions options;
  options.target = target;
  options.rounds = 300;
  options.max_depth = 6;
  const std::vector<TrainingRow> rows = synthetic_rows(4'000, 7);
  auto trained = XgbModel::train(rows, options);
  REQUIRE_MESSAGE(trained.ok(), trained.status().message());
  auto file = trained->model_file({rows.size(), 7, "2026-01-01T00:00:00Z"});
  REQUIRE_MESSAGE(file.ok(), file.status().message());
  auto model = TreeModel::parse(*file, "trained.json");
  REQUIRE_MESSAGE(model.ok(), model.status().message());
  CHECK(model->tree_count() == 300);

  const std::vector<FeatureVector> probe = probe_rows(nlohmann::json::parse(*file), 11);
  auto theirs = trained->predict_s(probe);
  REQUIRE_MESSAGE(theirs.ok(), theirs.status().message());
  REQUIRE(theirs->size() == probe.size());
  Compared c;
  for (std::size_t i = 0; i < probe.size(); ++i) {
    const double ours = model->predict_s(probe[i]);
    // log_ratio has no prediction where the row has no analytic estimate: both must say so.
    REQUIRE(std::isnan(ours) == std::isnan((*theirs)[i]));
    if (std::isnan(ours)) continue;
    const double diff = std::abs(ours - (*theirs)[i]);
    c.max_abs = std::max(c.max_abs, diff);
    c.max_rel = std::max(c.max_rel, diff / std::max(1.0, std::abs((*theirs)[i])));
  }
  return c;
}

}  // namespace

// Tolerance: |ours - XGBoost's| <= 1e-5 x max(1, |XGBoost's|) seconds, i.e. absolute below one
// second and relative above (times reach hundreds of seconds, where a float's last bit is 1e-5).
// In fact the difference is 0: the same float additions in the same order.
TEST_CASE("Model.Equality.TreeModelEqualsXGBoostOn10kRowsLogTarget") {
  const Compared c = compare(ModelTarget::log_seconds);
  MESSAGE("log_seconds: max abs diff " << c.max_abs << " s, max rel " << c.max_rel);
  CHECK(c.max_rel <= 1e-5);
}

TEST_CASE("Model.Equality.TreeModelEqualsXGBoostOn10kRowsSecondsTarget") {
  const Compared c = compare(ModelTarget::seconds);
  MESSAGE("seconds: max abs diff " << c.max_abs << " s, max rel " << c.max_rel);
  CHECK(c.max_rel <= 1e-5);
}

TEST_CASE("Model.Equality.TreeModelEqualsXGBoostOn10kRowsLogRatioTarget") {
  const Compared c = compare(ModelTarget::log_ratio);
  MESSAGE("log_ratio: max abs diff " << c.max_abs << " s, max rel " << c.max_rel);
  CHECK(c.max_rel <= 1e-5);
}

// What log_ratio is for: with few rows, learn where the analytic estimate is off rather than the
// whole time. Rows whose time is 1.5x their analytic estimate when the node's CPU share is low
// (below 0.5), and equal to it otherwise: 60 rows teach the ratio, not the time's shape.
TEST_CASE("Model.Training.LogRatioLearnsTheAnalyticEstimatesBiasFromFewRows") {
  auto biased = [](std::vector<TrainingRow> rows) {
    for (TrainingRow& r : rows) {
      FeatureVector& x = r.features;
      float& a = x[static_cast<std::size_t>(Feature::analytic_s)];
      float& share = x[static_cast<std::size_t>(Feature::cpu_share)];
      if (std::isnan(a)) a = 1;
      if (std::isnan(share)) share = 1;
      r.seconds = a * (share < 0.5f ? 1.5 : 1.0);
    }
    return rows;
  };
  const std::vector<TrainingRow> train = biased(synthetic_rows(60, 5));
  const std::vector<TrainingRow> test = biased(synthetic_rows(2'000, 6));
  auto mape = [&](ModelTarget target) {
    TrainOptions options;
    options.target = target;
    options.rounds = 100;
    options.max_depth = 3;
    auto trained = XgbModel::train(train, options);
    REQUIRE_MESSAGE(trained.ok(), trained.status().message());
    auto model = TreeModel::parse(*trained->model_file({60, 7, "x"}), "m.json");
    REQUIRE(model.ok());
    double sum = 0;
    for (const TrainingRow& r : test) sum += std::abs(model->predict_s(r.features) / r.seconds - 1);
    return sum / static_cast<double>(test.size());
  };
  const double ratio = mape(ModelTarget::log_ratio);
  const double whole = mape(ModelTarget::log_seconds);
  MESSAGE("MAPE on held-out rows: log_ratio " << ratio << ", log_seconds " << whole);
  CHECK(ratio < 0.05);
  CHECK(ratio < whole / 4);

  // Nothing to correct: refused, saying which target would do.
  std::vector<TrainingRow> none = synthetic_rows(10, 3);
  for (TrainingRow& r : none) r.features[static_cast<std::size_t>(Feature::analytic_s)] = kNaN;
  TrainOptions options;
  options.target = ModelTarget::log_ratio;
  auto refused = XgbModel::train(none, options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("--target log_seconds") != std::string::npos);
}

TEST_CASE("Model.Training.SameRowsAndSeedGiveTheSameFile") {
  const std::vector<TrainingRow> rows = synthetic_rows(500, 3);
  TrainOptions options;
  options.rounds = 20;
  options.subsample = 0.8;  // randomness that the seed must pin
  auto a = XgbModel::train(rows, options);
  auto b = XgbModel::train(rows, options);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a->model_file({500, 7, "x"}) == *b->model_file({500, 7, "x"}));
  options.seed = 2;
  auto c = XgbModel::train(rows, options);
  REQUIRE(c.ok());
  CHECK(*a->model_file({500, 7, "x"}) != *c->model_file({500, 7, "x"}));
}

TEST_CASE("Model.Training.RefusesRowsWithoutAPositiveTime") {
  std::vector<TrainingRow> rows = synthetic_rows(10, 3);
  CHECK_FALSE(XgbModel::train({}, {}).ok());
  rows[4].seconds = 0;
  auto r = XgbModel::train(rows, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("training row 5") != std::string::npos);
}

}  // namespace chorus
