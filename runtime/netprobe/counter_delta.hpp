// The increase of a kernel counter between two reads, safe across a wrap: counters that the
// kernel keeps in 32 bits (qdisc drops, some drivers' byte counts) wrap at 2^32, 64-bit ones
// practically never. A decrease is read as a 32-bit wrap when the earlier value fits 32 bits,
// else as a reset (the interface or qdisc was re-created): the new value is then the increase.
#pragma once

#include <cstdint>

namespace chorus::netprobe {

inline std::uint64_t counter_delta(std::uint64_t before, std::uint64_t now) {
  if (now >= before) return now - before;
  if (before <= 0xffffffffULL) return (now + (1ULL << 32)) - before;
  return now;
}

}  // namespace chorus::netprobe
