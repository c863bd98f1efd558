// `chorus model train`'s parts: training rows from a journal's placement records and events
// (cli/model/training_rows), rows files (schedulers/netaware/training/training_rows_csv), the split
// by whole runs and the refusals of too few rows (cli/model/train_model), and the report's text.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "cli/model/train_model.hpp"
#include "cli/model/training_rows.hpp"
#include "cli/output/output.hpp"
#include "schedulers/netaware/training/holdout.hpp"
#include "schedulers/netaware/training/training_rows_csv.hpp"
#include "schedulers/netaware/tree_model.hpp"
#include "support/process.hpp"

namespace chorus::cli {
namespace {

EventRecord event(TaskId task, std::uint32_t attempt, TaskState state, double time) {
  EventRecord e;
  e.task = task;
  e.attempt = attempt;
  e.state = state;
  e.time = time;
  return e;
}

PlacedAttempt placed(TaskId task, std::uint32_t attempt, float first_feature) {
  PlacedAttempt p;
  p.task = task;
  p.attempt = attempt;
  p.policy = "network-aware";
  p.features.assign(kFeatureCount, 1.0f);
  p.features[0] = first_feature;
  return p;
}

// Rows of `runs` runs whose times follow input_mb * 8 / down_mbps, 30% slower and 0.5 s more
// (what the analytic estimate misses), with noise.
std::vector<TrainingRow> rows_of(std::size_t runs, std::size_t per_run) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<TrainingRow> rows;
  for (std::size_t r = 0; r < runs; ++r) {
    for (std::size_t i = 0; i < per_run; ++i) {
      TrainingRow row;
      for (float& v : row.features) v = u(gen);
      const float in = 1 + 99 * u(gen);
      const float down = 10 + 190 * u(gen);
      row.features[static_cast<std::size_t>(Feature::input_mb)] = in;
      row.features[static_cast<std::size_t>(Feature::down_mbps)] = down;
      row.features[static_cast<std::size_t>(Feature::analytic_s)] = in * 8 / down;
      row.seconds = in * 8 / down * (1.25 + 0.1 * u(gen)) + 0.5;
      row.run = "run-" + std::to_string(r);
      rows.push_back(row);
    }
  }
  return rows;
}

std::string captured(const std::function<void(const Output&)>& write, OutputMode mode) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  REQUIRE(f != nullptr);
  write(Output(mode, f, f));
  std::fclose(f);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

}  // namespace

TEST_CASE("Cli.ModelTrain.RowsAreSucceededAttemptsTimedFromRunningToSucceeded") {
  const std::vector<EventRecord> events{
      event(0, 1, TaskState::running, 10), event(0, 1, TaskState::succeeded, 12.5),
      event(1, 1, TaskState::running, 11), event(1, 1, TaskState::failed, 13),
      event(1, 2, TaskState::running, 14), event(1, 2, TaskState::succeeded, 20),
      event(2, 1, TaskState::running, 15),  // still running: no row
      event(3, 1, TaskState::running, 16), event(3, 1, TaskState::succeeded, 17),
  };
  std::vector<PlacedAttempt> placements{placed(0, 1, 5), placed(1, 1, 6), placed(1, 2, 7),
                                        placed(2, 1, 8)};
  PlacedAttempt no_features = placed(3, 1, 9);
  no_features.features.clear();
  placements.push_back(no_features);
  const RunRows r = training_rows(placements, events, "wf-1");
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].seconds == doctest::Approx(2.5));
  CHECK(r.rows[0].features[0] == 5);
  CHECK(r.rows[0].run == "wf-1");
  CHECK(r.rows[1].seconds == doctest::Approx(6));  // the second attempt, not the failed first
  CHECK(r.rows[1].features[0] == 7);
  CHECK(r.placed == 5);
  CHECK(r.succeeded == 3);
  CHECK(r.without_features == 1);
}

TEST_CASE("Cli.ModelTrain.SplitIsByWholeRunsAndSeeded") {
  const std::vector<TrainingRow> rows = rows_of(8, 20);
  const RunSplit s = split_by_run(rows, 0.25, 3);
  CHECK(s.holdout_runs == 2);
  CHECK(s.train_runs == 6);
  CHECK(s.holdout.size() == 40);
  CHECK(s.train.size() == 120);
  std::set<std::string> train_runs;
  for (const TrainingRow& r : s.train) train_runs.insert(r.run);
  for (const TrainingRow& r : s.holdout) CHECK(train_runs.count(r.run) == 0);
  CHECK(split_by_run(rows, 0.25, 3).holdout[0].run == s.holdout[0].run);
  const RunSplit one = split_by_run(rows_of(1, 10), 0.25, 3);
  CHECK(one.holdout.empty());
  CHECK(one.train.size() == 10);
}

TEST_CASE("Cli.ModelTrain.RefusesTooFewRowsSayingHowMany") {
  const std::vector<TrainingRow> rows = rows_of(2, 10);
  auto r = train_model(rows, {}, "m.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  CHECK(r.status().message().find("found 20, needs at least 50") != std::string::npos);
}

TEST_CASE("Cli.ModelTrain.TrainsReportsHoldoutAndWritesALoadableModel") {
  ModelTrainOptions options;
  options.train.rounds = 50;
  options.created = "2026-12-02T00:00:00Z";
  auto r = train_model(rows_of(8, 40), options, "m.json");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const ModelTrainReport& rep = r->report;
  CHECK(rep.rows == 320);
  CHECK(rep.runs == 8);
  CHECK(rep.holdout_runs == 2);
  CHECK(rep.holdout_rows == 80);
  CHECK(rep.analytic_scored == 80);
  // The model learns the slowdown and offset the analytic estimate lacks.
  CHECK(rep.model_mape < rep.analytic_mape);
  auto model = TreeModel::parse(r->text, "m.json");
  REQUIRE(model.ok());
  CHECK(model->tree_count() == 50);
  const auto j = nlohmann::json::parse(r->text);
  CHECK(j["trained_on"]["rows"] == 320);
  CHECK(j["trained_on"]["runs"] == 8);
  CHECK(j["trained_on"]["created"] == "2026-12-02T00:00:00Z");
  CHECK(j["target"] == "log_seconds");

  const std::string text =
      captured([&](const Output& o) { o.model_trained(rep); }, OutputMode::plain);
  CHECK(text.find("m.json: 50 trees (target log_seconds), trained on 320 rows from 8 runs") !=
        std::string::npos);
  CHECK(text.find("80 rows from 2 runs held out") != std::string::npos);
  CHECK(text.find("holdout: model MAE") != std::string::npos);
  const std::string json =
      captured([&](const Output& o) { o.model_trained(rep); }, OutputMode::json);
  const auto parsed = nlohmann::json::parse(json);
  CHECK(parsed["holdout"]["runs"] == 2);
  CHECK(parsed["holdout"]["model"]["mape"].get<double>() == doctest::Approx(rep.model_mape));
}

TEST_CASE("Cli.ModelTrain.RowsFilesRoundTripAndBadOnesAreLocated") {
  test::TempDir dir;
  std::vector<TrainingRow> rows = rows_of(2, 3);
  rows[1].features[static_cast<std::size_t>(Feature::rtt_to_ms)] =
      std::numeric_limits<float>::quiet_NaN();
  {
    std::ofstream f(dir / "rows.csv");
    write_training_rows_csv(f, rows);
  }
  auto back = read_training_rows_csv(dir / "rows.csv");
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  REQUIRE(back->size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK((*back)[i].run == rows[i].run);
    CHECK((*back)[i].seconds == doctest::Approx(rows[i].seconds));
    for (std::size_t f = 0; f < kFeatureCount; ++f) {
      if (std::isnan(rows[i].features[f])) {
        CHECK(std::isnan((*back)[i].features[f]));
      } else {
        CHECK((*back)[i].features[f] == rows[i].features[f]);  // %.9g: the float survives
      }
    }
  }
  auto refused = [&](const std::string& text) {
    {
      std::ofstream f(dir / "bad.csv");
      f << text;
    }
    auto r = read_training_rows_csv(dir / "bad.csv");
    REQUIRE_FALSE(r.ok());
    return r.status().message();
  };
  std::ostringstream header;
  for (std::string_view n : feature_names()) header << n << ',';
  const std::string h = header.str();
  CHECK(refused(h + "seconds,speed\n").find("bad.csv:1: unknown column \"speed\"") !=
        std::string::npos);
  CHECK(refused(h.substr(0, h.size() - 1) + "\n").find("bad.csv:1: no \"seconds\" column") !=
        std::string::npos);
  CHECK(refused("input_mb,seconds\n").find("bad.csv:1: no column for feature \"output_mb\"") !=
        std::string::npos);
  CHECK(refused(h + "seconds\n1,2\n")
            .find("bad.csv:2: 2 fields, the header has " + std::to_string(kFeatureCount + 1)) !=
        std::string::npos);
  std::string row;
  for (std::size_t i = 0; i < kFeatureCount; ++i) row += "1,";
  CHECK(refused(h + "seconds\n" + row + "0\n").find("bad.csv:2: seconds must be positive") !=
        std::string::npos);
  CHECK(refused(h + "seconds\n" + row + "x\n")
            .find("bad.csv:2: column \"seconds\": \"x\" is not a number") != std::string::npos);
  auto missing = read_training_rows_csv(dir / "none.csv");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::io_error);
}

}  // namespace chorus::cli
