// The data-server protocol: what `chorus data-server` speaks, what agents' probes
// (runtime/netprobe/) and the test bed's job program use. Plain TCP, one request per line,
// ASCII, then raw bytes; a connection may carry several requests.
//
//   PING\n                 -> PONG\n                          (a round trip)
//   GET <n>\n              -> OK <n>\n then n bytes           (source -> client transfer)
//   PUT <n>\n + n bytes    -> OK <n>\n once all n arrived     (client -> source transfer)
//   anything else          -> ERR <reason>\n, and the server closes the connection
//
// n is decimal, at most kMaxTransfer. Bytes are not meaningful (a repeating pattern): the
// server measures nothing and stores nothing; it exists to be a realistic far end of a link.
#pragma once

#include <cstdint>

namespace chorus::netprobe {

inline constexpr std::uint64_t kMaxTransfer = 1ULL << 34;  // 16 GiB
inline constexpr std::uint32_t kMaxLine = 64;              // a request line, newline included

}  // namespace chorus::netprobe
