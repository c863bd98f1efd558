#include "schedulers/quorum/sgd/workload.hpp"

#include <algorithm>

namespace chorus::sgd {

void Workload::initial(std::span<double> w) const {
  std::fill(w.begin(), w.end(), 0.0);
}

}  // namespace chorus::sgd
