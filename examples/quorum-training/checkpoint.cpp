#include "examples/quorum-training/checkpoint.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "examples/quorum-training/training_config.hpp"

namespace quorum_training {

using nlohmann::json;

namespace {

json round_to_json(const RoundRecord& r) {
  json arrivals = json::array();
  for (double a : r.arrivals) arrivals.push_back(a < 0 ? json(nullptr) : json(a));
  json used = json::array();
  for (bool u : r.used) used.push_back(u ? 1 : 0);
  return {{"round", r.round},           {"k", r.k},
          {"target", r.target},         {"start_s", r.start_s},
          {"duration_s", r.duration_s}, {"loss", r.loss},
          {"arrivals", arrivals},       {"used", used}};
}

RoundRecord round_from_json(const json& j) {
  RoundRecord r;
  r.round = j.at("round").get<int>();
  r.k = j.at("k").get<int>();
  r.target = j.at("target").get<int>();
  r.start_s = j.at("start_s").get<double>();
  r.duration_s = j.at("duration_s").get<double>();
  r.loss = j.at("loss").get<double>();
  for (const auto& a : j.at("arrivals")) r.arrivals.push_back(a.is_null() ? -1 : a.get<double>());
  for (const auto& u : j.at("used")) r.used.push_back(u.get<int>() != 0);
  return r;
}

}  // namespace

chorus::Status write_checkpoint(const std::string& path, const Checkpoint& cp) {
  json rounds = json::array();
  for (const auto& r : cp.rounds) rounds.push_back(round_to_json(r));
  const json j = {{"round_done", cp.round_done},
                  {"weights", cp.weights},
                  {"train_start_unix", cp.train_start_unix},
                  {"resumed_at", cp.resumed_at},
                  {"rejected", cp.rejected},
                  {"late_dropped", cp.late_dropped},
                  {"late_timed", cp.late_timed},
                  {"rounds", rounds}};
  return write_atomically(path, j.dump());
}

chorus::Result<Checkpoint> read_checkpoint(const std::string& path, std::size_t dim) {
  std::ifstream in(path);
  if (!in) return chorus::not_found(path + " does not exist");
  std::stringstream text;
  text << in.rdbuf();
  Checkpoint cp;
  try {
    const json j = json::parse(text.str());
    cp.round_done = j.at("round_done").get<int>();
    cp.weights = j.at("weights").get<std::vector<double>>();
    cp.train_start_unix = j.at("train_start_unix").get<double>();
    cp.resumed_at = j.at("resumed_at").get<std::vector<int>>();
    cp.rejected = j.at("rejected").get<std::vector<std::int64_t>>();
    cp.late_dropped = j.at("late_dropped").get<std::int64_t>();
    cp.late_timed = j.at("late_timed").get<std::int64_t>();
    for (const auto& r : j.at("rounds")) cp.rounds.push_back(round_from_json(r));
  } catch (const json::exception& e) {
    return chorus::invalid_argument(path + ": not a checkpoint: " + e.what());
  }
  if (cp.weights.size() != dim) {
    return chorus::invalid_argument(path + ": holds " + std::to_string(cp.weights.size()) +
                                    " weights, the workload has " + std::to_string(dim) +
                                    " (a checkpoint of another run? remove it to start afresh)");
  }
  for (double w : cp.weights) {
    if (!std::isfinite(w)) return chorus::invalid_argument(path + ": a weight is not finite");
  }
  return cp;
}

std::string rounds_json(const std::vector<RoundRecord>& rounds) {
  json all = json::array();
  for (const auto& r : rounds) all.push_back(round_to_json(r));
  return all.dump();
}

}  // namespace quorum_training
