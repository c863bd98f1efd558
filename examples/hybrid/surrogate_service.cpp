#include "examples/hybrid/surrogate_service.hpp"

#include <string>
#include <vector>

#include "examples/hybrid/sim_record.hpp"

namespace chorus::hybrid {
namespace {

nlohmann::json error_reply(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}

// Reads [[a, b], ...] (or [[a, b, value], ...] when `with_value`) into points and values.
Status read_points(const nlohmann::json& list, bool with_value, std::vector<Point>& points,
                   std::vector<double>& values) {
  if (!list.is_array()) return invalid_argument("\"points\" must be a list of [a, b] pairs");
  const std::size_t width = with_value ? 3 : 2;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& p = list[i];
    bool good = p.is_array() && p.size() == width;
    for (std::size_t k = 0; good && k < width; ++k) good = p[k].is_number();
    if (!good)
      return invalid_argument("points[" + std::to_string(i) + "] must be " +
                              (with_value ? "[a, b, value]" : "[a, b]") + " numbers, got " +
                              p.dump());
    points.push_back({p[0].get<double>(), p[1].get<double>()});
    if (with_value) values.push_back(p[2].get<double>());
  }
  return {};
}

}  // namespace

nlohmann::json SurrogateService::handle(const nlohmann::json& request) {
  ++requests_;
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string())
    return error_reply("a request is a JSON object with a string \"op\" (predict, fit, status)");
  const std::string op = request["op"].get<std::string>();
  if (op == "predict") return predict(request);
  if (op == "fit") return fit(request);
  if (op == "status") return describe();
  return error_reply("unknown op '" + op + "' (expected predict, fit or status)");
}

Status SurrogateService::fit_directory(const std::filesystem::path& dir, int max_round) {
  auto sims = load_sims(dir);
  if (!sims) return sims.status();
  std::vector<Point> x;
  std::vector<double> y;
  for (const SimRecord& s : *sims) {
    if (s.round > max_round) continue;
    x.push_back(s.x);
    y.push_back(s.value);
  }
  return model_.fit(x, y);
}

nlohmann::json SurrogateService::predict(const nlohmann::json& request) const {
  std::vector<Point> points;
  std::vector<double> unused;
  if (Status s = read_points(request.value("points", nlohmann::json()), false, points, unused); !s)
    return error_reply("predict: " + s.message());
  nlohmann::json mean = nlohmann::json::array(), stdev = nlohmann::json::array();
  for (const Prediction& p : model_.predict(points)) {
    mean.push_back(p.mean);
    stdev.push_back(p.std);
  }
  return {{"ok", true}, {"n_train", model_.size()}, {"mean", mean}, {"std", stdev}};
}

nlohmann::json SurrogateService::fit(const nlohmann::json& request) {
  Status status;
  if (request.contains("dir")) {
    if (!request["dir"].is_string()) return error_reply("fit: \"dir\" must be a path");
    int max_round = std::numeric_limits<int>::max();
    if (request.contains("max_round")) {
      if (!request["max_round"].is_number_integer())
        return error_reply("fit: \"max_round\" must be an integer");
      max_round = request["max_round"].get<int>();
    }
    status = fit_directory(request["dir"].get<std::string>(), max_round);
  } else if (request.contains("points")) {
    std::vector<Point> x;
    std::vector<double> y;
    status = read_points(request["points"], true, x, y);
    if (status) status = model_.fit(x, y);
  } else {
    return error_reply("fit: give \"dir\" (a folder holding round-*/sim-*.json) or \"points\"");
  }
  if (!status) return error_reply("fit: " + status.message());
  return describe();
}

nlohmann::json SurrogateService::describe() const {
  const Hyperparameters& h = model_.hyperparameters();
  return {{"ok", true},
          {"n_train", model_.size()},
          {"length_scale", h.length_scale},
          {"noise_variance", h.noise_variance},
          {"log_likelihood", h.log_likelihood},
          {"requests", requests_}};
}

}  // namespace chorus::hybrid
