// GaussianProcess: the surrogate model of the hybrid example, Gaussian-process regression on
// points of [0,1]^2 with an RBF kernel and a noise term.
//
// fit() centres and scales the targets, then picks the length scale and the noise variance that
// maximise the log marginal likelihood over a small fixed grid (the signal variance of the scaled
// targets is 1). Cost: O(grid * n^3) per fit, meant for n up to a few hundred points.
#pragma once

#include <array>
#include <vector>

#include "core/status.hpp"

namespace chorus::hybrid {

using Point = std::array<double, 2>;

struct Prediction {
  double mean = 0.0;
  double std = 0.0;  // of the latent function (without the noise term)
};

struct Hyperparameters {
  double length_scale = 0.3;
  double noise_variance = 1e-4;  // relative to the scaled targets' unit signal variance
  double log_likelihood = 0.0;
};

class GaussianProcess {
 public:
  // Replaces the training set. Fails (and keeps the previous model) when the inputs are
  // inconsistent or no grid setting gives a positive definite kernel matrix. An empty training
  // set is valid: predictions are then the prior (mean 0, std 1).
  Status fit(const std::vector<Point>& x, const std::vector<double>& y);

  // Mean and standard deviation at each point, in the targets' units.
  std::vector<Prediction> predict(const std::vector<Point>& points) const;

  std::size_t size() const { return x_.size(); }
  const Hyperparameters& hyperparameters() const { return hyper_; }

 private:
  std::vector<Point> x_;
  std::vector<double> alpha_;     // K^-1 (y - mean) / scale
  std::vector<double> cholesky_;  // lower triangle of K = L L^T, row-major n x n
  double y_mean_ = 0.0;
  double y_scale_ = 1.0;
  Hyperparameters hyper_;
};

}  // namespace chorus::hybrid
