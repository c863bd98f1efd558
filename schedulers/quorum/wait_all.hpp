// wait-all: fully synchronous rounds; every worker's result is used. The baseline whose pace is
// the slowest worker's.
#pragma once

#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

class WaitAllQuorum final : public QuorumPolicy {
 public:
  void begin(const RoundStart& round) override { n_ = round.n; }
  QuorumVerdict on_arrival(const Arrival& a) override {
    return a.received >= n_ ? QuorumVerdict::close : QuorumVerdict::wait;
  }
  void end(const RoundEnd& /*round*/) override {}
  int target() const override { return n_; }

 private:
  int n_ = 0;
};

}  // namespace chorus
