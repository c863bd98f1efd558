#include "schedulers/quorum/dbw_plus.hpp"

#include "schedulers/quorum/quorum_options.hpp"

namespace chorus {

DbwConfig DbwPlus::defaults() {
  DbwConfig c;
  c.pooled = true;
  c.memory = 8;
  c.window = 20;
  c.k_min = 2;
  c.react = false;
  c.deadline = true;
  c.grace = 0.2;
  c.noise = 1;
  c.floor_l = false;
  c.impute = false;
  c.keep_plan = true;
  c.ratchet = 1.25;
  return c;
}

std::vector<OptionSpec> DbwPlus::option_specs() {
  return {{"pool", OptionKind::number},    {"memory", OptionKind::number},
          {"window", OptionKind::number},  {"k_min", OptionKind::number},
          {"react", OptionKind::number},   {"deadline", OptionKind::number},
          {"grace", OptionKind::number},   {"noise", OptionKind::number},
          {"l_floor", OptionKind::number}, {"l_scale", OptionKind::number},
          {"impute", OptionKind::number},  {"step", OptionKind::number},
          {"worth", OptionKind::number},   {"keep", OptionKind::number},
          {"ratchet", OptionKind::number}};
}

Result<std::unique_ptr<QuorumPolicy>> DbwPlus::from_args(PolicyArgs& args) {
  DbwConfig c = defaults();
  c.pooled = quorum_number(args, "pool", 1, {0, 1, false, true}) == 1;
  c.memory = quorum_number(args, "memory", c.memory, {1, 1e6});
  c.window = static_cast<int>(quorum_number(args, "window", c.window, {1, 10000, true}));
  c.k_min = static_cast<int>(quorum_number(args, "k_min", c.k_min, {1, 1e6, true}));
  c.react = quorum_number(args, "react", c.react ? 1 : 0, {0, 1, false, true}) == 1;
  c.deadline = quorum_number(args, "deadline", 1, {0, 1, false, true}) == 1;
  c.grace = quorum_number(args, "grace", c.grace, {0, 1000});
  c.noise = quorum_number(args, "noise", c.noise, {0, 1e9});
  c.floor_l = quorum_number(args, "l_floor", c.floor_l ? 1 : 0, {0, 1, false, true}) == 1;
  c.l_scale = quorum_number(args, "l_scale", c.l_scale, {1e-6, 1e6});
  c.impute = quorum_number(args, "impute", c.impute ? 1 : 0, {0, 1, false, true}) == 1;
  c.step = static_cast<int>(quorum_number(args, "step", c.step, {0, 1e6, true}));
  c.worth = quorum_number(args, "worth", c.worth, {0, 1});
  c.keep_plan = quorum_number(args, "keep", 1, {0, 1, false, true}) == 1;
  c.ratchet = quorum_number(args, "ratchet", c.ratchet, {0, 1e6});
  return std::unique_ptr<QuorumPolicy>(std::make_unique<DbwQuorum>(c));
}

}  // namespace chorus
