// static: wait for the fastest k = n - b results of every round and drop the b late ones
// (backup workers: Chen et al., "Revisiting Distributed Synchronous SGD", 2016). Options `k`
// (results to use) or `b` (backup workers), not both; a k above the round's n uses all n.
#pragma once

#include <memory>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

class StaticQuorum final : public QuorumPolicy {
 public:
  // Exactly one of k >= 1 or b >= 0 is used: `by_backups` says which.
  StaticQuorum(int value, bool by_backups) : value_(value), by_backups_(by_backups) {}

  static std::vector<OptionSpec> option_specs() {
    return {{"k", OptionKind::number}, {"b", OptionKind::number}};
  }
  static Result<std::unique_ptr<QuorumPolicy>> from_args(PolicyArgs& args);

  void begin(const RoundStart& round) override;
  QuorumVerdict on_arrival(const Arrival& a) override {
    return a.received >= k_ ? QuorumVerdict::close : QuorumVerdict::wait;
  }
  void end(const RoundEnd& /*round*/) override {}
  int target() const override { return k_; }

 private:
  int value_;
  bool by_backups_;
  int k_ = 1;
};

}  // namespace chorus
