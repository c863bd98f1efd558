#include "examples/hybrid/gaussian_process.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

namespace chorus::hybrid {
namespace {

double rbf(const Point& p, const Point& q, double length_scale) {
  const double dx = p[0] - q[0], dy = p[1] - q[1];
  return std::exp(-(dx * dx + dy * dy) / (2.0 * length_scale * length_scale));
}

// In-place Cholesky of the row-major n x n matrix m (lower triangle used and written). False when
// m is not (numerically) positive definite.
bool cholesky(std::vector<double>& m, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = m[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= m[j * n + k] * m[j * n + k];
    if (!(d > 0.0)) return false;
    const double ljj = std::sqrt(d);
    m[j * n + j] = ljj;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = m[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= m[i * n + k] * m[j * n + k];
      m[i * n + j] = s / ljj;
    }
  }
  return true;
}

// Solves L v = b (forward substitution).
std::vector<double> solve_lower(const std::vector<double>& l, std::size_t n,
                                std::vector<double> b) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= l[i * n + k] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

// Solves L^T v = b (back substitution).
std::vector<double> solve_upper(const std::vector<double>& l, std::size_t n,
                                std::vector<double> b) {
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= l[k * n + i] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

struct Candidate {
  Hyperparameters hyper;
  std::vector<double> cholesky;
  std::vector<double> alpha;
};

std::optional<Candidate> try_fit(const std::vector<Point>& x, const std::vector<double>& z,
                                 double length_scale, double noise) {
  const std::size_t n = x.size();
  std::vector<double> k(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) k[i * n + j] = rbf(x[i], x[j], length_scale);
    k[i * n + i] += noise;
  }
  if (!cholesky(k, n)) return std::nullopt;
  std::vector<double> alpha = solve_upper(k, n, solve_lower(k, n, z));
  double fit_term = 0.0, log_det = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    fit_term += z[i] * alpha[i];
    log_det += std::log(k[i * n + i]);
  }
  const double ll =
      -0.5 * fit_term - log_det - 0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
  return Candidate{{length_scale, noise, ll}, std::move(k), std::move(alpha)};
}

}  // namespace

Status GaussianProcess::fit(const std::vector<Point>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    return invalid_argument("fit: " + std::to_string(x.size()) + " points but " +
                            std::to_string(y.size()) + " values");
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i]) || !std::isfinite(x[i][0]) || !std::isfinite(x[i][1]))
      return invalid_argument("fit: point " + std::to_string(i) + " is not finite");
  }
  const std::size_t n = x.size();
  double mean = 0.0, scale = 1.0;
  if (n > 0) {
    for (double v : y) mean += v;
    mean /= static_cast<double>(n);
  }
  if (n > 1) {
    double var = 0.0;
    for (double v : y) var += (v - mean) * (v - mean);
    var /= static_cast<double>(n - 1);
    if (var > 0.0) scale = std::sqrt(var);
  }
  std::vector<double> z(n);
  for (std::size_t i = 0; i < n; ++i) z[i] = (y[i] - mean) / scale;

  // Log-spaced length scales from 0.05 to 1 (the domain's size); noise from interpolation to
  // 1% of the signal. Duplicated points make the small noise values fail, the others still fit.
  static constexpr double kLengthScales[] = {0.05, 0.07, 0.1, 0.14, 0.2, 0.28, 0.4, 0.56, 0.8, 1.0};
  static constexpr double kNoises[] = {1e-6, 1e-4, 1e-2};
  std::optional<Candidate> best;
  for (double l : kLengthScales) {
    for (double s : kNoises) {
      auto c = try_fit(x, z, l, s);
      if (c && (!best || c->hyper.log_likelihood > best->hyper.log_likelihood)) best = std::move(c);
    }
  }
  if (!best)
    return invalid_argument("fit: the kernel matrix of " + std::to_string(n) +
                            " points is not positive definite for any setting");
  x_ = x;
  alpha_ = std::move(best->alpha);
  cholesky_ = std::move(best->cholesky);
  hyper_ = best->hyper;
  y_mean_ = mean;
  y_scale_ = scale;
  return {};
}

std::vector<Prediction> GaussianProcess::predict(const std::vector<Point>& points) const {
  const std::size_t n = x_.size();
  std::vector<Prediction> out;
  out.reserve(points.size());
  for (const Point& p : points) {
    std::vector<double> ks(n);
    double mean = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      ks[i] = rbf(p, x_[i], hyper_.length_scale);
      mean += ks[i] * alpha_[i];
    }
    double var = 1.0;
    if (n > 0) {
      const std::vector<double> v = solve_lower(cholesky_, n, std::move(ks));
      for (double e : v) var -= e * e;
    }
    out.push_back({y_mean_ + y_scale_ * mean, y_scale_ * std::sqrt(std::max(var, 0.0))});
  }
  return out;
}

}  // namespace chorus::hybrid
