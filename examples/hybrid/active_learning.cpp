#include "examples/hybrid/active_learning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace chorus::hybrid {
namespace {

// A uniform double in [0, 1) from the generator's raw bits (std::uniform_real_distribution's
// output is implementation-defined; this is the same on every standard library).
double unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

std::vector<int> permutation(int n, std::mt19937_64& rng) {
  std::vector<int> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  for (int i = n - 1; i > 0; --i)
    std::swap(p[static_cast<std::size_t>(i)], p[rng() % static_cast<std::uint64_t>(i + 1)]);
  return p;
}

double distance(const Point& p, const Point& q) {
  return std::hypot(p[0] - q[0], p[1] - q[1]);
}

}  // namespace

std::vector<Point> space_filling(int n, std::uint64_t seed, int tries) {
  std::mt19937_64 rng(seed);
  std::vector<Point> best;
  double best_gap = -1.0;
  for (int t = 0; t < std::max(tries, 1); ++t) {
    const std::vector<int> rows = permutation(n, rng), cols = permutation(n, rng);
    std::vector<Point> design;
    for (int i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      design.push_back({(rows[u] + unit(rng)) / n, (cols[u] + unit(rng)) / n});
    }
    double gap = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < design.size(); ++i)
      for (std::size_t j = i + 1; j < design.size(); ++j)
        gap = std::min(gap, distance(design[i], design[j]));
    if (gap > best_gap) {
      best_gap = gap;
      best = std::move(design);
    }
  }
  return best;
}

Result<std::vector<Point>> grid_slice(int part, int nparts) {
  constexpr int total = kGridSide * kGridSide;
  if (nparts < 1 || nparts > total)
    return invalid_argument("NPARTS must be 1.." + std::to_string(total) + ", got " +
                            std::to_string(nparts));
  if (part < 0 || part >= nparts)
    return invalid_argument("PART must be 0.." + std::to_string(nparts - 1) + ", got " +
                            std::to_string(part));
  const long begin = static_cast<long>(part) * total / nparts;
  const long end = static_cast<long>(part + 1) * total / nparts;
  std::vector<Point> out;
  for (long i = begin; i < end; ++i)
    out.push_back({(static_cast<double>(i % kGridSide) + 0.5) / kGridSide,
                   (static_cast<double>(i / kGridSide) + 0.5) / kGridSide});
  return out;
}

std::vector<Scored> select_batch(const std::vector<Scored>& scored, int k, double min_distance) {
  std::vector<Scored> order = scored;
  // Ties broken by position so the choice does not depend on the order the parts were merged in.
  std::sort(order.begin(), order.end(), [](const Scored& p, const Scored& q) {
    if (p.std != q.std) return p.std > q.std;
    return p.x < q.x;
  });
  std::vector<Scored> picked;
  for (const Scored& s : order) {
    if (static_cast<int>(picked.size()) >= k) break;
    const bool far = std::all_of(picked.begin(), picked.end(), [&](const Scored& p) {
      return distance(p.x, s.x) >= min_distance;
    });
    if (far) picked.push_back(s);
  }
  return picked;
}

std::optional<double> rmse(const std::vector<double>& predicted,
                           const std::vector<double>& actual) {
  if (predicted.empty() || predicted.size() != actual.size()) return std::nullopt;
  double sum = 0.0;
  for (std::size_t i = 0; i < predicted.size(); ++i)
    sum += (predicted[i] - actual[i]) * (predicted[i] - actual[i]);
  return std::sqrt(sum / static_cast<double>(predicted.size()));
}

bool improved(std::optional<double> previous, std::optional<double> current) {
  if (!previous || !current) return true;
  return *current <= (1.0 - kImprovement) * *previous;
}

}  // namespace chorus::hybrid
