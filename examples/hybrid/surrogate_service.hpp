// SurrogateService: what the surrogate program does with one request, apart from the transport
// (so it can be tested without sockets). One JSON object in, one JSON object out; the operations
// and their fields are listed in README.md ("Protocol").
#pragma once

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "examples/hybrid/gaussian_process.hpp"

namespace chorus::hybrid {

class SurrogateService {
 public:
  // Answers one request. Never throws: a malformed request or a failed fit yields
  // {"ok":false,"error":"<what to fix>"} and leaves the model as it was.
  nlohmann::json handle(const nlohmann::json& request);

  // Fits on every round-*/sim-*.json under `dir` of rounds <= max_round (all by default).
  Status fit_directory(const std::filesystem::path& dir,
                       int max_round = std::numeric_limits<int>::max());

  const GaussianProcess& model() const { return model_; }
  long requests() const { return requests_; }

 private:
  nlohmann::json predict(const nlohmann::json& request) const;
  nlohmann::json fit(const nlohmann::json& request);
  nlohmann::json describe() const;

  GaussianProcess model_;
  long requests_ = 0;
};

}  // namespace chorus::hybrid
