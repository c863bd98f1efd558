// libFuzzer target: the simulator's network description reader (parse_network_json), and the
// facts and runtimes of what it accepts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "schedulers/sim/network_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto net = chorus::sim::parse_network_json(text, "fuzz.json");
  if (!net.ok()) {
    (void)net.status().message().size();
    return 0;
  }
  chorus::DataMovement d;
  d.input_bytes = 1'000'000;
  d.from = 0;
  d.output_bytes = 1000;
  d.to = static_cast<chorus::SourceId>(net->sources.size() - 1);
  for (std::size_t i = 0; i < net->nodes.size() && i < 16; ++i) {
    chorus::NodeFacts f;
    net->write_facts(f, i, 123.5, 4, 2);
    volatile double t = net->runtime_s(d, 1.0, i, 123.5, 4, 2, 2);
    (void)t;
  }
  return 0;
}
