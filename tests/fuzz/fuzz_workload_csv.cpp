// libFuzzer target: the simulator's CSV workload reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "schedulers/sim/workload_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto workload = chorus::sim::read_workload_csv(text, "fuzz.csv");
  if (!workload.ok()) (void)workload.status().message().size();
  return 0;
}
