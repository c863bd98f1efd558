// dbw+: dbw (dbw_quorum.hpp) with the fixes issue 15 names for the reconstructed rule's failure
// (0.6-1.05x of the best static b in a simulator study: the last round's gradient-norm estimate
// feeds back on itself at small k, and a plan fixed at the round's start cannot react inside
// it). Each fix is an option so its effect can be measured (docs/quorum-policies.md, the
// ablation); the defaults are one set for every scenario (untuned):
//
//   pool: 1      G^2, V and L pooled across rounds (decay 1 - 1/memory), G^2 from the pooled V
//   memory: 8    rounds of that pooling
//   window: 10   rounds of arrival times behind the order statistics (a regime switch, S5, is
//                forgotten within it)
//   k_min: 2     never close on an arrival with fewer than 2 results (V needs two)
//   react: 1     re-decide at every arrival: close when dF(m) - rho t nets more than the best
//                dF(j) - rho E[T_(j) | m arrived, the rest later than t], rho the plan's rate
//                (optimal stopping of a renewal-reward process)
//   deadline: 1  a tick at (1 + grace) x the planned target's expected arrival re-decides a
//                round blocked on stragglers without an arrival, with the late ones known to be
//                later than now; past every time in the window it closes
//   grace: 0.25
//   noise: 1     V / G^2 when the rounds carry no gradient statistics (workflow rounds)
//
// The learning rate is read every round (RoundStart::learning_rate, S6's step), so the model
// follows it. pool 0, window 1, k_min 1, react 0, deadline 0 is dbw exactly.
#pragma once

#include <memory>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/quorum/dbw_quorum.hpp"

namespace chorus {

struct DbwPlus {
  static DbwConfig defaults();
  static std::vector<OptionSpec> option_specs();
  static Result<std::unique_ptr<QuorumPolicy>> from_args(PolicyArgs& args);
};

}  // namespace chorus
