// The decisions of the hybrid example's active-learning loop, free of files and sockets so they
// can be tested: where to start, which grid points a score task owns, which candidates to simulate
// next, and when the surrogate stopped improving.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.hpp"
#include "examples/hybrid/gaussian_process.hpp"

namespace chorus::hybrid {

// The candidate grid the score tasks evaluate: kGridSide^2 cell centres of [0,1]^2.
inline constexpr int kGridSide = 64;
// Fraction by which the RMSE must drop from one round to the next to count as an improvement.
inline constexpr double kImprovement = 0.05;

// n points of [0,1]^2 spread over the square: the Latin hypercube design with the largest smallest
// pairwise distance among `tries` designs drawn from `seed`. Same (n, seed) -> same points.
std::vector<Point> space_filling(int n, std::uint64_t seed, int tries = 64);

// The grid points score part `part` of `nparts` owns: a contiguous slice of the row-major grid;
// the slices of parts 0..nparts-1 cover every point exactly once. Fails for a part out of range.
Result<std::vector<Point>> grid_slice(int part, int nparts);

struct Scored {
  Point x{};
  double mean = 0.0;
  double std = 0.0;
};

// The k points to simulate next: greedily the largest predictive std (pure error reduction),
// skipping points closer than min_distance to one already picked so a batch does not cluster in
// one uncertain corner. Returns fewer than k only when fewer points are far enough apart.
std::vector<Scored> select_batch(const std::vector<Scored>& scored, int k, double min_distance);

// Root mean square of predicted - actual; nullopt for empty inputs.
std::optional<double> rmse(const std::vector<double>& predicted, const std::vector<double>& actual);

// Whether `current` counts as an improvement on `previous`: true when either is unknown (nothing
// to compare yet), else when current <= (1 - kImprovement) * previous.
bool improved(std::optional<double> previous, std::optional<double> current);

}  // namespace chorus::hybrid
