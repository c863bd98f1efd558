// libFuzzer target: the WfCommons reader (WfFormat 1.4/1.5 JSON -> WorkflowGraph).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "workflows/wfcommons_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto instance = chorus::parse_wfcommons(text, "fuzz.json");
  if (!instance.ok()) (void)instance.status().message().size();
  return 0;
}
