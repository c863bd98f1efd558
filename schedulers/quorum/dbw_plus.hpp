// dbw+: dbw (dbw_quorum.hpp) with the fixes issue 15 names for the reconstructed rule's failure
// (0.6-1.05x of the best static b in a simulator study: the last round's gradient-norm estimate
// feeds back on itself at small k, and a plan fixed at the round's start cannot react inside
// it). Each fix is an option so its effect can be measured (docs/quorum-policies.md, the
// ablation); the defaults are one set for every scenario (untuned):
//
//   pool: 1      G^2, V and L pooled across rounds (decay 1 - 1/memory), G^2 from the pooled V
//   memory: 8    rounds of that pooling
//   window: 20   rounds of arrival times behind the order statistics (a regime switch, S5, is
//                forgotten within it; 10 until a sweep on held-out seeds, docs/quorum-policies.md)
//   k_min: 2     never close on an arrival with fewer than 2 results (V needs two)
//   react: 0     (1: re-decide at every arrival: close when dF(m) - rho t nets more than the
//                best dF(j) - rho E[T_(j) | m arrived, the rest later than t], rho the plan's
//                rate; optimal stopping of a renewal-reward process. Off by default: measured
//                worse on S2 and S5 in interrupt mode, docs/quorum-policies.md)
//   deadline: 1  a tick at (1 + grace) x the planned target's expected arrival closes a round
//                blocked on stragglers (with react, re-decides it with the late ones known to be
//                later than now; past every time in the window it closes), never on fewer
//                than k_min results
//   grace: 0.2   (0.25 until the same sweep)
//   worth: 0     (w: a tick closes only when dF(m) >= w dF(k planned), else later ticks ask
//                less; right at eta 0.5, wrong at eta 0.05: off, docs/quorum-policies.md)
//   impute: 0    (1: untimed late results at their expected times under an exponential tail
//                fitted to the round, arrival_window.hpp; measured worse: off)
//   l_floor: 0   (1: L bounded by the stationary relation E[G^2] >= eta L V / (2k); measured
//                harmful: its running minimum locks onto noise)
//   l_scale: 1   a factor on L, for the ablation of the curvature estimate only
//   step: 0      the most the planned k may move between rounds (0: no limit; measured no gain)
//   keep: 1      when no k promises a decrease, keep the previous round's k (0: wait for all n,
//                dbw's reading; measured: 0.82-0.97x -> 0.86-0.97x of the best static b)
//   ratchet: 1.25  never plan more than max(m + 1, ratchet x m) results, m the median of this
//                policy's earlier plans (0: no limit). Late in training the one-step rule,
//                reading a gradient its own noise holds up, asks for ever more results; the
//                median moves only as fast as the run's history does (docs/quorum-policies.md)
//   noise: 1     V / G^2 when the rounds carry no gradient statistics (workflow rounds)
//
// The learning rate is read every round (RoundStart::learning_rate, S6's step), so the model
// follows it. pool 0, window 1, k_min 1, react 0, deadline 0, keep 0, ratchet 0 (impute 0,
// l_floor 0, l_scale 1, step 0) is dbw exactly.
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
