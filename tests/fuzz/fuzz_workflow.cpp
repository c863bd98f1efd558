// libFuzzer target: the workflow reader (YAML text -> WorkflowGraph). Any input must give a graph
// or a Status; an exception, a sanitizer report, a hang or an OOM is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "workflows/workflow_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  chorus::WorkflowLoadOptions options;
  // Fixed, so that relative workdirs resolve the same way whatever the fuzzer's cwd is.
  options.base_dir = "/nonexistent/fuzz";
  // Lower caps than a real run's, through the same checks: a million tasks from a 100-byte sweep
  // is allowed by design but takes seconds under ASan, and the fuzzer would spend its time there.
  options.max_tasks = 10'000;
  options.max_text_bytes = 64 * 1024 * 1024;
  auto graph = chorus::parse_workflow_text(text, "fuzz.yaml", options);
  if (!graph.ok()) (void)graph.status().message().size();
  return 0;
}
