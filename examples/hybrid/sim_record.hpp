// SimRecord: one finished simulation of the hybrid example, as heat_solver writes it to
// round-<R>/sim-<i>.json: {"a":..,"b":..,"value":..,"ranks":N}.
#pragma once

#include <filesystem>
#include <vector>

#include "core/status.hpp"
#include "examples/hybrid/gaussian_process.hpp"

namespace chorus::hybrid {

struct SimRecord {
  Point x{};
  double value = 0.0;
  int round = 0;  // R of round-R/, 0 when the file is not in a round folder
  int index = 0;  // i of sim-i.json
};

// Reads one simulation file. Fails with the path and the reason when it is missing, is not JSON or
// lacks a numeric a, b or value.
Result<SimRecord> read_sim(const std::filesystem::path& file);

// Every round-<R>/sim-<i>.json under `dir`, sorted by (round, index); other names (such as the
// solver's sim-<i>.json.tmp) are ignored. `only_round` > 0 keeps that round's folder only.
// Fails on the first file that cannot be read.
Result<std::vector<SimRecord>> load_sims(const std::filesystem::path& dir, int only_round = 0);

// The integer N of a name "<prefix>N<suffix>", or -1 when the name has another shape.
int numbered_name(const std::string& name, const std::string& prefix, const std::string& suffix);

}  // namespace chorus::hybrid
