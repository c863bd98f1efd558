// Parsing and printing of durations ("30s", "10m", "1h30m", "250ms", "1.5") and memory sizes
// ("512M", "2G", "1024" = MB). Used by workflow files, CLI options and reports.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace chorus {

using Duration = std::chrono::nanoseconds;
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// A bare number means seconds. Units: ms, s, m, h, d; they may be chained ("1h30m").
// Errors: empty text, negative values, unknown units, overflow.
Result<Duration> parse_duration(std::string_view text);

// "850ms", "12.3s", "4m05s", "2h03m".
std::string format_duration(Duration d);

// A bare number means megabytes. Suffixes K, M, G, T (optionally followed by B or iB), base 1024.
Result<std::int64_t> parse_memory_mb(std::string_view text);

// A data size in bytes (workflow `data: {input: 64MB}`): decimal units K, M, G, T (optionally
// followed by B: 64MB = 64e6 bytes, the MB of the network-aware feature vector), binary ones
// KiB, MiB, GiB, TiB (1024-based); a bare number is bytes. Unlike memory sizes above, which are
// 1024-based and default to MB. At most 1e18 bytes; the result is rounded up to whole bytes.
Result<std::uint64_t> parse_data_bytes(std::string_view text);

// Seconds since the Unix epoch, as a double (what the journal stores).
double wall_seconds_now();

}  // namespace chorus
