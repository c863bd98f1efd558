// Workload: the gradient math of a training problem that quorum rounds run, real rather than
// modelled: the simulator (round_simulator), the live parameter server and its workers compute
// the same gradients, so a policy's loss-per-second is measured, not assumed.
//
// Parameters are a flat vector of dim() doubles; a batch is a list of sample indices in
// [0, samples()). Implementations are immutable after construction and safe to call from
// several threads at once (each caller owns its output buffer). Eigen stays inside the .cpp
// files of this folder (its one home, cmake/check_layering.cmake).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace chorus::sgd {

class Workload {
 public:
  virtual ~Workload() = default;

  virtual std::string name() const = 0;  // "logistic d=100 N=20000", "softmax digits"
  virtual std::size_t dim() const = 0;
  virtual std::size_t samples() const = 0;

  // The starting parameters (zeros unless a workload says otherwise).
  virtual void initial(std::span<double> w) const;
  // The mean gradient over `batch` of the regularised loss at `w`, into `g` (size dim()).
  virtual void gradient(std::span<const double> w, std::span<const std::uint32_t> batch,
                        std::span<double> g) const = 0;
  // The regularised training loss at `w`, a mean over every sample (the target metric).
  virtual double loss(std::span<const double> w) const = 0;
  // The loss over `batch` only (cheap; what a worker can report alongside its gradient).
  virtual double batch_loss(std::span<const double> w,
                            std::span<const std::uint32_t> batch) const = 0;
};

}  // namespace chorus::sgd
