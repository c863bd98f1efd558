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
  const json j = {{"round_done", cp.round_done},
                  {"weights", cp.weights},
                  {"train_start_unix", cp.train_start_unix},
                  {"resumed_at", cp.resumed_at},
                  {"rejected", cp.rejected},
                  {"late_dropped", cp.late_dropped},
                  {"late_timed", cp.late_timed}};
  return write_atomically(path, j.dump());
}

chorus::Status append_round(const std::string& rounds_path, const RoundRecord& round) {
  std::ofstream out(rounds_path, std::ios::app);
  out << round_to_json(round).dump() << "\n" << std::flush;
  if (!out) return chorus::io_error("cannot append to " + rounds_path);
  return chorus::Status::ok_status();
}

chorus::Result<Checkpoint> read_checkpoint(const std::string& path, const std::string& rounds_path,
                                           std::size_t dim) {
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
  // The rounds log: a line cut short by the kill, or rounds after the checkpoint, are dropped.
  std::ifstream log(rounds_path);
  std::string kept;
  for (std::string line; std::getline(log, line);) {
    try {
      auto r = round_from_json(json::parse(line));
      if (r.round != static_cast<int>(cp.rounds.size()) + 1 || r.round > cp.round_done) break;
      cp.rounds.push_back(std::move(r));
      kept += line + "\n";
    } catch (const json::exception&) {
      break;
    }
  }
  if (static_cast<int>(cp.rounds.size()) != cp.round_done) {
    return chorus::invalid_argument(rounds_path + ": holds " + std::to_string(cp.rounds.size()) +
                                    " rounds, the checkpoint " + std::to_string(cp.round_done));
  }
  if (auto s = write_atomically(rounds_path, kept); !s.ok()) return s;
  return cp;
}

std::string rounds_json(const std::vector<RoundRecord>& rounds) {
  json all = json::array();
  for (const auto& r : rounds) all.push_back(round_to_json(r));
  return all.dump();
}

}  // namespace quorum_training
