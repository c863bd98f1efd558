// JSON text for the simulator's writers (metrics, per-job records, `chorus simulate --json`).
// Reading is nlohmann-json's, inside workload_io.cpp; nlohmann stays out of this header so that
// code including schedulers/ does not need it.
#pragma once

#include <string>
#include <string_view>

namespace chorus::sim {

// `s` as a JSON string literal, quotes included. Bytes that are not valid UTF-8 become U+FFFD, so
// the output is always valid JSON.
std::string json_quote(std::string_view s);
// A number as JSON with 10 significant digits (the precision of every figure the simulator
// prints); non-finite values become null.
std::string json_number(double d);

}  // namespace chorus::sim
