#include "schedulers/netaware/training/holdout.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

namespace chorus {

std::size_t count_runs(std::span<const TrainingRow> rows) {
  std::set<std::string_view> runs;
  for (const TrainingRow& r : rows) runs.insert(r.run);
  return runs.size();
}

RunSplit split_by_run(std::span<const TrainingRow> rows, double holdout_fraction,
                      std::uint64_t seed) {
  std::set<std::string> set;
  for (const TrainingRow& r : rows) set.insert(r.run);
  std::vector<std::string> runs(set.begin(), set.end());
  // std::shuffle's use of the engine is unspecified: a Fisher-Yates of our own keeps the split
  // the same across standard libraries.
  std::mt19937_64 gen(seed);
  for (std::size_t i = runs.size(); i > 1; --i) std::swap(runs[i - 1], runs[gen() % i]);
  std::size_t k = 0;
  if (runs.size() >= 2) {
    k = static_cast<std::size_t>(std::lround(holdout_fraction * static_cast<double>(runs.size())));
    k = std::clamp<std::size_t>(k, 1, runs.size() - 1);
  }
  const std::set<std::string> held(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(k));
  RunSplit s;
  s.holdout_runs = k;
  s.train_runs = runs.size() - k;
  for (const TrainingRow& r : rows) (held.count(r.run) != 0 ? s.holdout : s.train).push_back(r);
  return s;
}

namespace {
template <typename Predict>
HoldoutError error_of(std::span<const TrainingRow> rows, Predict predict) {
  HoldoutError e;
  e.rows = rows.size();
  for (const TrainingRow& r : rows) {
    const double p = predict(r);
    if (!std::isfinite(p)) continue;
    ++e.scored;
    e.mae_s += std::abs(p - r.seconds);
    e.mape += std::abs(p - r.seconds) / r.seconds;
  }
  if (e.scored > 0) {
    e.mae_s /= static_cast<double>(e.scored);
    e.mape /= static_cast<double>(e.scored);
  }
  return e;
}
}  // namespace

HoldoutError holdout_error(const TreeModel& model, std::span<const TrainingRow> rows) {
  return error_of(rows, [&](const TrainingRow& r) { return model.predict_s(r.features); });
}

HoldoutError analytic_error(std::span<const TrainingRow> rows) {
  return error_of(rows, [](const TrainingRow& r) {
    return static_cast<double>(feature(r.features, Feature::analytic_s));
  });
}

}  // namespace chorus
