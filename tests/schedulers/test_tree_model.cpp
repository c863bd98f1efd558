// TreeModel (schedulers/netaware/tree_model.hpp): the evaluator of dumped XGBoost trees on
// hand-made forests, and the files it refuses, each with an error naming the file. Its equality
// with XGBoost's own predictions is tests/model/test_model_equality.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "schedulers/netaware/tree_model.hpp"

namespace chorus {
namespace {

using json = nlohmann::json;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

json features_json() {
  json names = json::array();
  for (std::string_view n : feature_names()) names.push_back(std::string(n));
  return names;
}

json leaf(int id, double value) {
  return {{"nodeid", id}, {"leaf", value}};
}

json split(int id, const char* feature, double cond, int yes, int no, int missing, json a, json b) {
  return {{"nodeid", id},       {"depth", 0},
          {"split", feature},   {"split_condition", cond},
          {"yes", yes},         {"no", no},
          {"missing", missing}, {"children", json::array({std::move(a), std::move(b)})}};
}

// Two trees in seconds: down_mbps < 100 ? 10 : 2 (missing -> 10), plus input_mb < 5 ? -1 :
// (cpu_s < 1 ? 0.5 : 3) (missing -> no side), on base 1.
json model(const char* target = "seconds") {
  json t0 = split(0, "down_mbps", 100, 1, 2, 1, leaf(1, 10), leaf(2, 2));
  json t1 = split(0, "input_mb", 5, 1, 2, 2, leaf(1, -1),
                  split(2, "cpu_s", 1, 3, 4, 3, leaf(3, 0.5), leaf(4, 3)));
  return {{"format", "chorus-jct-model"},
          {"version", 1},
          {"features", features_json()},
          {"target", target},
          {"base_score", 1},
          {"trees", json::array({t0, t1})},
          {"trained_on", {{"rows", 0}, {"runs", 0}, {"created", "test"}}}};
}

FeatureVector row(float down, float input, float cpu) {
  FeatureVector x;
  x.fill(kNaN);
  x[static_cast<std::size_t>(Feature::down_mbps)] = down;
  x[static_cast<std::size_t>(Feature::input_mb)] = input;
  x[static_cast<std::size_t>(Feature::cpu_s)] = cpu;
  return x;
}

std::string refusal(const json& j) {
  auto m = TreeModel::parse(j.dump(), "m.json");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == ErrorCode::invalid_argument);
  return m.status().message();
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Schedulers.TreeModel.HandMadeTreesFollowSplitsAndMissingSides") {
  auto m = TreeModel::parse(model().dump(), "m.json");
  REQUIRE(m.ok());
  CHECK(m->tree_count() == 2);
  CHECK(m->path() == "m.json");
  CHECK(m->predict_s(row(50, 1, 0)) == doctest::Approx(1 + 10 - 1));
  CHECK(m->predict_s(row(100, 1, 0)) == doctest::Approx(1 + 2 - 1));  // 100 < 100 is false
  CHECK(m->predict_s(row(200, 9, 0.5f)) == doctest::Approx(1 + 2 + 0.5));
  CHECK(m->predict_s(row(200, 9, 1)) == doctest::Approx(1 + 2 + 3));
  // Missing: tree 0 goes yes (10); tree 1 goes no at input_mb, then yes at cpu_s.
  CHECK(m->predict_s(row(kNaN, kNaN, kNaN)) == doctest::Approx(1 + 10 + 0.5));
}

TEST_CASE("Schedulers.TreeModel.LogTargetIsExponentiated") {
  auto m = TreeModel::parse(model("log_seconds").dump(), "m.json");
  REQUIRE(m.ok());
  CHECK(m->predict_s(row(50, 1, 0)) == doctest::Approx(std::exp(10.0)));
}

TEST_CASE("Schedulers.TreeModel.ChildrenMayBeListedInEitherOrder") {
  json j = model();
  auto& children = j["trees"][0]["children"];
  std::swap(children[0], children[1]);
  auto m = TreeModel::parse(j.dump(), "m.json");
  REQUIRE(m.ok());
  CHECK(m->predict_s(row(50, 1, 0)) == doctest::Approx(10));
  CHECK(m->predict_s(row(500, 1, 0)) == doctest::Approx(2));
}

TEST_CASE("Schedulers.TreeModel.LoadReadsAFileAndNamesAMissingOne") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tree-model-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.json").string();
  std::ofstream(path) << model().dump(1);
  auto m = TreeModel::load(path);
  REQUIRE(m.ok());
  CHECK(m->path() == path);
  CHECK(m->tree_count() == 2);
  auto missing = TreeModel::load((dir / "none.json").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::io_error);
  CHECK(has(missing.status().message(), "none.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Schedulers.TreeModel.RefusesWhatIsNotAModel") {
  auto text = TreeModel::parse("{\"format\": ", "m.json");
  REQUIRE_FALSE(text.ok());
  CHECK(has(text.status().message(), "m.json: not a chorus model (not JSON"));
  CHECK(has(refusal(json::array()), "m.json: not a chorus model"));
  // A number JSON can write but a double cannot hold: nlohmann's out_of_range, not a parse_error
  // (found by fuzz_tree_model).
  auto huge = TreeModel::parse("{\"format\": 1e999}", "m.json");
  REQUIRE_FALSE(huge.ok());
  CHECK(has(huge.status().message(), "m.json: not a chorus model (not JSON"));
  json other = model();
  other["format"] = "xgboost";
  CHECK(has(refusal(other), "m.json: not a chorus model (\"format\" is \"xgboost\""));
  json v2 = model();
  v2["version"] = 2;
  CHECK(has(refusal(v2), "m.json: model file version 2, this build reads version 1"));
  json target = model();
  target["target"] = "minutes";
  CHECK(has(refusal(target), "\"target\" is \"minutes\""));
  json base = model();
  base.erase("base_score");
  CHECK(has(refusal(base), "base_score"));
  json none = model();
  none["trees"] = json::array();
  CHECK(has(refusal(none), "\"trees\" must be a non-empty array"));
}

TEST_CASE("Schedulers.TreeModel.RefusesOtherFeaturesNamingTheFirstDifference") {
  json renamed = model();
  renamed["features"][3] = "bandwidth";
  const std::string why = refusal(renamed);
  CHECK(has(why, "m.json: trained on other features"));
  CHECK(has(why, "feature 4 is bandwidth there, down_mbps here"));
  CHECK(has(why, "[input_mb, output_mb, cpu_s, bandwidth,"));
  CHECK(has(why, "this build has [input_mb, output_mb, cpu_s, down_mbps,"));
  json shorter = model();
  shorter["features"].erase(shorter["features"].size() - 1);
  CHECK(has(refusal(shorter), "it lacks analytic_s (feature 21)"));
  json longer = model();
  longer["features"].push_back("extra");
  CHECK(has(refusal(longer), "it has more: extra (feature 22)"));
}

TEST_CASE("Schedulers.TreeModel.RefusesMalformedTrees") {
  json unknown = model();
  unknown["trees"][0]["split"] = "f3";
  CHECK(has(refusal(unknown), "m.json: malformed tree 0: node 0 splits on unknown feature \"f3\""));
  json out_of_range = model();
  out_of_range["trees"][1]["nodeid"] = -4;
  CHECK(has(refusal(out_of_range), "malformed tree 1: node id -4 out of range"));
  json wrong_child = model();
  wrong_child["trees"][0]["yes"] = 7;
  wrong_child["trees"][0]["missing"] = 7;
  CHECK(
      has(refusal(wrong_child), "split 0 names children 7 and 2 that are not among its children"));
  json one_child = model();
  one_child["trees"][0]["children"].erase(1);
  CHECK(has(refusal(one_child), "split 0 does not have its two children"));
  json missing_side = model();
  missing_side["trees"][0]["missing"] = 5;
  CHECK(has(refusal(missing_side), "missing must be one of two distinct children"));
  // A child carrying its parent's id: a cycle in the ids' graph.
  json cycle = model();
  cycle["trees"][1]["children"][1]["nodeid"] = 0;
  cycle["trees"][1]["no"] = 0;
  cycle["trees"][1]["yes"] = 1;
  cycle["trees"][1]["missing"] = 1;
  CHECK(has(refusal(cycle), "malformed tree 1: node id 0 appears twice (a cycle)"));
  json neither = model();
  neither["trees"][0]["children"][0].erase("leaf");
  CHECK(has(refusal(neither), "node 1 is neither a leaf nor a split"));
  json no_cond = model();
  no_cond["trees"][0].erase("split_condition");
  CHECK(has(refusal(no_cond), "split 0 has no numeric \"split_condition\""));
  json not_number = model();
  not_number["trees"][0]["children"][1]["leaf"] = "x";
  CHECK(has(refusal(not_number), "leaf 2 is not a number"));
}

// A chain of 20 splits on cpu_s (cpu_s < d + 1 ? leaf d : next): deeper than the complete
// layout's limit, so it is walked as linked nodes; beside it nine shallow trees (a block of eight
// walked together, and one more).
TEST_CASE("Schedulers.TreeModel.DeepAndShallowTreesTogether") {
  json chain = leaf(20, 20);
  for (int d = 19; d >= 0; --d)
    chain = split(d, "cpu_s", d + 1, 1000 + d, d + 1, d + 1, leaf(1000 + d, d), chain);
  json j = model();
  json trees = json::array({chain});
  for (int i = 0; i < 9; ++i)
    trees.push_back(split(0, "down_mbps", 100, 1, 2, 1, leaf(1, 10), leaf(2, 2)));
  j["trees"] = trees;
  auto m = TreeModel::parse(j.dump(), "m.json");
  REQUIRE(m.ok());
  CHECK(m->tree_count() == 10);
  CHECK(m->predict_s(row(50, 0, 0.5f)) == doctest::Approx(1 + 0 + 9 * 10));
  CHECK(m->predict_s(row(500, 0, 7.5f)) == doctest::Approx(1 + 7 + 9 * 2));
  CHECK(m->predict_s(row(kNaN, 0, 100)) == doctest::Approx(1 + 20 + 9 * 10));
  // NaN in the chain: missing goes `no` (deeper) at every level, to the last leaf.
  CHECK(m->predict_s(row(500, 0, kNaN)) == doctest::Approx(1 + 20 + 9 * 2));
}

TEST_CASE("Schedulers.TreeModel.RefusesAnAbsurdlyDeepTree") {
  json t = leaf(100, 1);
  for (int d = 99; d >= 0; --d)
    t = split(d, "cpu_s", 1, d + 1, 1000 + d, d + 1, t, leaf(1000 + d, 0));
  json j = model();
  j["trees"] = json::array({t});
  CHECK(has(refusal(j), "deeper than 64 levels"));
}

}  // namespace chorus
