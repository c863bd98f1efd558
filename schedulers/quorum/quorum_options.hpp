// Reading the adaptive quorum policies' numeric options (dbw, dbw+, adasync): a value outside
// its range is reported at the value through PolicyArgs::fail, in the registry's words, and the
// default is kept so the factory can go on collecting every problem of the section.
#pragma once

#include <cmath>
#include <string>

#include "schedulers/policy_options.hpp"

namespace chorus {

struct NumberRange {
  double least;
  double most;
  bool whole = false;  // a count (rounds, workers)
  bool flag = false;   // 0 (off) or 1 (on): an ablation switch
};

// `key`'s value when given and in range, else `fallback` (a problem recorded when given and out
// of range).
inline double quorum_number(PolicyArgs& args, const char* key, double fallback, NumberRange r) {
  const OptionEntry* e = args.find(key);
  if (e == nullptr) return fallback;
  const double v = *args.number(key);
  const bool ok =
      r.flag ? (v == 0 || v == 1) : v >= r.least && v <= r.most && (!r.whole || v == std::floor(v));
  if (ok) return v;
  auto shown = [](double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  std::string want = r.flag    ? "0 (off) or 1 (on)"
                     : r.whole ? "a whole number from " + shown(r.least) + " to " + shown(r.most)
                               : "a number from " + shown(r.least) + " to " + shown(r.most);
  args.fail(e->value.at,
            "'" + e->key + "' of " + args.policy() + " must be " + want + ", got " + e->value.text);
  return fallback;
}

}  // namespace chorus
