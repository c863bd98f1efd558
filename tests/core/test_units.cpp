#include <doctest/doctest.h>

#include "core/units.hpp"

using namespace chorus;
using namespace std::chrono_literals;

TEST_CASE("Core.Duration.ParsesUnitsAndChains") {
  CHECK(parse_duration("30s").value() == 30s);
  CHECK(parse_duration("10m").value() == 10min);
  CHECK(parse_duration("1h30m").value() == 90min);
  CHECK(parse_duration("250ms").value() == 250ms);
  CHECK(parse_duration("1.5").value() == 1500ms);
}

TEST_CASE("Core.Duration.RejectsBadText") {
  for (const char* bad : {"", "-1s", "abc", "10x", "1 2", "s"}) {
    auto r = parse_duration(bad);
    CHECK_MESSAGE(!r.ok(), bad);
    if (!r.ok()) CHECK(r.status().message().find("invalid duration") != std::string::npos);
  }
}

TEST_CASE("Core.Memory.ParsesSuffixes") {
  CHECK(parse_memory_mb("512M").value() == 512);
  CHECK(parse_memory_mb("2G").value() == 2048);
  CHECK(parse_memory_mb("2GiB").value() == 2048);
  CHECK(parse_memory_mb("100").value() == 100);
  CHECK(!parse_memory_mb("-5M").ok());
  CHECK(!parse_memory_mb("5Q").ok());
}

TEST_CASE("Core.DataBytes.DecimalUnitsBinaryWithIB") {
  CHECK(*parse_data_bytes("64MB") == 64'000'000u);
  CHECK(*parse_data_bytes("64M") == 64'000'000u);
  CHECK(*parse_data_bytes("1.5G") == 1'500'000'000u);
  CHECK(*parse_data_bytes("2k") == 2'000u);
  CHECK(*parse_data_bytes("512KiB") == 512u * 1024u);
  CHECK(*parse_data_bytes("1MiB") == 1024u * 1024u);
  CHECK(*parse_data_bytes("100") == 100u);
  CHECK(*parse_data_bytes("100B") == 100u);
  CHECK(*parse_data_bytes("0") == 0u);
  CHECK(*parse_data_bytes("1T") == 1'000'000'000'000u);
  for (const char* bad : {"", "-1M", "12X", "MB", "1e30G", "4 parsecs"}) {
    auto r = parse_data_bytes(bad);
    CHECK_MESSAGE(!r.ok(), bad);
    if (!r.ok()) CHECK(r.status().message().find("invalid data size") != std::string::npos);
  }
}
