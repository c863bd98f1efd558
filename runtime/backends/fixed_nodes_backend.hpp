// FixedNodesBackend: the part every backend without agents shares — nodes fixed at construction,
// nothing to start or stop, placement as given (its nodes cannot be lost during a run). A
// subclass names itself and hands out its launchers (local_backend.cpp, slurm_backend.cpp's
// SrunStepsBackend).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "runtime/backends/execution_backend.hpp"

namespace chorus {

class FixedNodesBackend : public ExecutionBackend {
 public:
  explicit FixedNodesBackend(std::vector<NodeInfo> nodes) : nodes_(std::move(nodes)) {}

  Status start(const BackendStart&) override { return {}; }
  void stop() override {}
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const override {
    return policy;
  }

 private:
  std::vector<NodeInfo> nodes_;
};

}  // namespace chorus
