// hybrid_tool: the fine-grained tasks of the hybrid example, run in the workflow's folder.
//   init OUT N SEED          N space-filling candidates -> OUT (round-1/candidates.json)
//   evaluate ROUND           RMSE of the surrogate on the round's new simulations, then refit
//                            every replica on all simulations -> round-R/metrics.json
//   score ROUND PART NPARTS  predict this part's slice of the 64x64 grid -> round-R/score-PART.json
//   select ROUND K           the K grid points of largest predictive std ->
//   round-(R+1)/candidates.json summary                  the RMSE per round
// The service is reached through CHORUS_SERVICE_SURROGATE (comma-separated replica endpoints).
// Exit codes: 0 ok, 1 failure (the message says what to fix), 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "examples/hybrid/active_learning.hpp"
#include "examples/hybrid/service_client.hpp"
#include "examples/hybrid/sim_record.hpp"

namespace fs = std::filesystem;
using chorus::Result;
using chorus::Status;
using nlohmann::json;
using namespace chorus::hybrid;

namespace {

constexpr const char* kServiceEnv = "CHORUS_SERVICE_SURROGATE";
constexpr std::chrono::seconds kTimeout{30};
// Smallest distance between two candidates of one batch (the square's side is 1).
constexpr double kMinSeparation = 0.1;

Result<int> parse_int(const char* text, const char* what, int min) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > 1000000)
    return chorus::invalid_argument(std::string(what) + " must be an integer >= " +
                                    std::to_string(min) + ", got '" + text + "'");
  return static_cast<int>(v);
}

fs::path round_dir(int round) {
  return "round-" + std::to_string(round);
}

// Writes through a temporary file and a rename, so a concurrent reader never sees half a file.
Status write_json(const fs::path& path, const json& value) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return chorus::io_error(path.parent_path().string() + ": " + ec.message());
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << value.dump() << '\n';
    if (!out) return chorus::io_error(tmp.string() + ": cannot write");
  }
  fs::rename(tmp, path, ec);
  if (ec) return chorus::io_error(path.string() + ": " + ec.message());
  return {};
}

Result<json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return chorus::not_found(path.string() + ": cannot open");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return chorus::invalid_argument(path.string() + ": not valid JSON");
  return j;
}

json point_list(const std::vector<Point>& points) {
  json out = json::array();
  for (const Point& p : points) out.push_back({p[0], p[1]});
  return out;
}

int fail(const Status& s) {
  std::fprintf(stderr, "hybrid_tool: %s\n", s.message().c_str());
  return 1;
}

int cmd_init(const fs::path& out, int n, int seed) {
  json list = json::array();
  for (const Point& p : space_filling(n, static_cast<std::uint64_t>(seed)))
    list.push_back({{"a", p[0]}, {"b", p[1]}});
  if (Status s = write_json(out, list); !s) return fail(s);
  std::printf("init: %d space-filling candidates -> %s\n", n, out.string().c_str());
  return 0;
}

int cmd_evaluate(int round) {
  auto endpoints = endpoints_from_env(kServiceEnv);
  if (!endpoints) return fail(endpoints.status());
  const fs::path here = fs::current_path();
  auto sims = load_sims(here, round);
  if (!sims) return fail(sims.status());
  if (sims->empty())
    return fail(chorus::not_found((round_dir(round) / "sim-*.json").string() +
                                  ": no simulation results: did the simulate tasks run?"));

  // The model the RMSE measures is the one trained on the earlier rounds only; refitting it on
  // exactly those first makes a retried evaluate (or a restarted replica) give the same figure.
  const char* task = std::getenv("CHORUS_TASK");
  const std::size_t primary = pick_replica(task != nullptr ? task : "evaluate", endpoints->size());
  auto client = ServiceClient::connect((*endpoints)[primary], kTimeout);
  if (!client) return fail(client.status());
  auto before = client->call({{"op", "fit"}, {"dir", here.string()}, {"max_round", round - 1}});
  if (!before) return fail(before.status());
  std::vector<Point> points;
  std::vector<double> actual;
  for (const SimRecord& s : *sims) {
    points.push_back(s.x);
    actual.push_back(s.value);
  }
  auto predicted = client->call({{"op", "predict"}, {"points", point_list(points)}});
  if (!predicted) return fail(predicted.status());
  const auto n_train = (*predicted)["n_train"].get<long>();
  const std::optional<double> error =
      n_train > 0 ? rmse((*predicted)["mean"].get<std::vector<double>>(), actual) : std::nullopt;

  long n_fit = -1;
  for (const std::string& endpoint : *endpoints) {
    auto replica = ServiceClient::connect(endpoint, kTimeout);
    if (!replica) return fail(replica.status());
    auto fitted = replica->call({{"op", "fit"}, {"dir", here.string()}});
    if (!fitted) return fail(fitted.status());
    const long n = (*fitted)["n_train"].get<long>();
    if (n_fit >= 0 && n != n_fit)
      return fail(chorus::internal_error(endpoint + " trained on " + std::to_string(n) +
                                         " simulations, another replica on " +
                                         std::to_string(n_fit)));
    n_fit = n;
  }

  std::optional<double> previous;
  if (round > 1) {
    const fs::path prev_file = round_dir(round - 1) / "metrics.json";
    auto prev = read_json(prev_file);
    if (!prev) return fail(prev.status());
    if (prev->contains("rmse") && (*prev)["rmse"].is_number())
      previous = (*prev)["rmse"].get<double>();
  }
  const bool better = improved(previous, error);
  json metrics = {{"round", round},         {"rmse", error ? json(*error) : json(nullptr)},
                  {"improved", better},     {"n_train", n_train},
                  {"n_test", sims->size()}, {"n_fit", n_fit}};
  if (Status s = write_json(round_dir(round) / "metrics.json", metrics); !s) return fail(s);
  if (error)
    std::printf("round %d: surrogate RMSE %.6g (trained on %ld, tested on %zu new simulations)%s\n",
                round, *error, n_train, sims->size(), better ? "" : ", no longer improving");
  else
    std::printf("round %d: surrogate RMSE n/a (no training data yet)\n", round);
  return 0;
}

int cmd_score(int round, int part, int nparts) {
  auto points = grid_slice(part, nparts);
  if (!points) return fail(points.status());
  auto endpoints = endpoints_from_env(kServiceEnv);
  if (!endpoints) return fail(endpoints.status());
  // Round-robin over the parts spreads the score tasks evenly over the replicas.
  const std::string& endpoint = (*endpoints)[static_cast<std::size_t>(part) % endpoints->size()];
  auto client = ServiceClient::connect(endpoint, kTimeout);
  if (!client) return fail(client.status());
  auto reply = client->call({{"op", "predict"}, {"points", point_list(*points)}});
  if (!reply) return fail(reply.status());
  const auto mean = (*reply)["mean"].get<std::vector<double>>();
  const auto stdev = (*reply)["std"].get<std::vector<double>>();
  if (mean.size() != points->size() || stdev.size() != points->size())
    return fail(chorus::internal_error(endpoint + ": answered " + std::to_string(mean.size()) +
                                       " predictions for " + std::to_string(points->size()) +
                                       " points"));
  json rows = json::array();
  for (std::size_t i = 0; i < points->size(); ++i)
    rows.push_back({(*points)[i][0], (*points)[i][1], mean[i], stdev[i]});
  json out = {{"round", round},
              {"part", part},
              {"nparts", nparts},
              {"n_train", (*reply)["n_train"]},
              {"points", rows}};
  const fs::path file = round_dir(round) / ("score-" + std::to_string(part) + ".json");
  if (Status s = write_json(file, out); !s) return fail(s);
  return 0;
}

int cmd_select(int round, int k) {
  const fs::path dir = round_dir(round);
  std::error_code ec;
  std::map<int, fs::path> parts;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const int part = numbered_name(entry.path().filename().string(), "score-", ".json");
    if (part >= 0) parts[part] = entry.path();
  }
  if (ec) return fail(chorus::not_found(dir.string() + ": " + ec.message()));
  if (parts.empty())
    return fail(chorus::not_found(dir.string() + ": no score-*.json: did the score tasks run?"));
  std::vector<Scored> scored;
  int nparts = -1;
  for (const auto& [part, path] : parts) {
    auto j = read_json(path);
    if (!j) return fail(j.status());
    const int n = j->value("nparts", -1);
    if (nparts >= 0 && n != nparts)
      return fail(chorus::invalid_argument(path.string() + ": nparts " + std::to_string(n) +
                                           ", other parts say " + std::to_string(nparts)));
    nparts = n;
    for (const auto& row : j->value("points", json::array()))
      scored.push_back({{row[0].get<double>(), row[1].get<double>()},
                        row[2].get<double>(),
                        row[3].get<double>()});
  }
  std::string missing;
  for (int p = 0; p < nparts; ++p)
    if (!parts.contains(p)) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
  if (!missing.empty() || static_cast<int>(parts.size()) != nparts)
    return fail(chorus::not_found(dir.string() + ": score parts missing of " +
                                  std::to_string(nparts) + ": " +
                                  (missing.empty() ? "extra parts present" : missing)));
  const std::vector<Scored> batch = select_batch(scored, k, kMinSeparation);
  json list = json::array();
  for (const Scored& s : batch)
    list.push_back({{"a", s.x[0]}, {"b", s.x[1]}, {"mean", s.mean}, {"std", s.std}});
  const fs::path out = round_dir(round + 1) / "candidates.json";
  if (Status s = write_json(out, list); !s) return fail(s);
  std::printf("round %d: %zu candidates for round %d from %zu scored points (largest std %.4g)\n",
              round, batch.size(), round + 1, scored.size(), batch.empty() ? 0.0 : batch[0].std);
  return 0;
}

int cmd_summary() {
  std::map<int, json> rounds;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::current_path(), ec)) {
    const int round = numbered_name(entry.path().filename().string(), "round-", "");
    if (round < 0 || !fs::exists(entry.path() / "metrics.json")) continue;
    auto j = read_json(entry.path() / "metrics.json");
    if (!j) return fail(j.status());
    rounds[round] = *j;
  }
  if (rounds.empty())
    return fail(chorus::not_found("no round-*/metrics.json here: did any evaluate task run?"));
  std::printf("round  trained on  tested on  surrogate RMSE  improved\n");
  for (const auto& [round, m] : rounds) {
    const std::string error = m.contains("rmse") && m["rmse"].is_number()
                                  ? std::to_string(m["rmse"].get<double>())
                                  : "n/a";
    std::printf("%5d  %10ld  %9ld  %14s  %s\n", round, m.value("n_train", 0L),
                m.value("n_test", 0L), error.c_str(), m.value("improved", false) ? "yes" : "no");
  }
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: hybrid_tool init OUT N SEED | evaluate ROUND | score ROUND PART NPARTS |\n"
               "                   select ROUND K | summary\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  try {
    if (cmd == "init" && argc == 5) {
      auto n = parse_int(argv[3], "N", 1);
      auto seed = parse_int(argv[4], "SEED", 0);
      if (!n || !seed) return fail(!n ? n.status() : seed.status());
      return cmd_init(argv[2], *n, *seed);
    }
    if (cmd == "evaluate" && argc == 3) {
      auto round = parse_int(argv[2], "ROUND", 1);
      return round ? cmd_evaluate(*round) : fail(round.status());
    }
    if (cmd == "score" && argc == 5) {
      auto round = parse_int(argv[2], "ROUND", 1);
      auto part = parse_int(argv[3], "PART", 0);
      auto nparts = parse_int(argv[4], "NPARTS", 1);
      if (!round || !part || !nparts)
        return fail(!round ? round.status() : !part ? part.status() : nparts.status());
      return cmd_score(*round, *part, *nparts);
    }
    if (cmd == "select" && argc == 4) {
      auto round = parse_int(argv[2], "ROUND", 1);
      auto k = parse_int(argv[3], "K", 1);
      if (!round || !k) return fail(!round ? round.status() : k.status());
      return cmd_select(*round, *k);
    }
    if (cmd == "summary" && argc == 2) return cmd_summary();
  } catch (const json::exception& e) {
    // A reply or a file with the right syntax but the wrong shape (e.g. a string where a number
    // belongs) ends here, with the library's description of what was wrong.
    return fail(chorus::invalid_argument(std::string("unexpected JSON content: ") + e.what()));
  }
  return usage();
}
