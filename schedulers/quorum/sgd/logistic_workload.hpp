// Synthetic logistic regression (issue 15: d 100-1,000): N samples x ~ N(0, I_d), a hidden
// w* ~ N(0, I_d / d), labels y ~ Bernoulli(sigmoid(x . w*)) so the problem is noisy, not
// separable; L2 regularisation lambda. Drawn from a seed: the same seed gives the same data.
// A gradient over a batch of B samples costs ~2 B d multiply-adds (d 1,000, B 2,000: ~1-2 ms).
#pragma once

#include <cstdint>
#include <memory>

#include "schedulers/quorum/sgd/workload.hpp"

namespace chorus::sgd {

struct LogisticParams {
  std::size_t dim = 100;
  std::size_t samples = 20'000;
  double l2 = 1e-4;
  std::uint64_t seed = 1;
};

std::unique_ptr<Workload> make_logistic(const LogisticParams& params);

}  // namespace chorus::sgd
