// libFuzzer target: the workflow reader (YAML text -> WorkflowGraph). Any input must give a graph
// or a Status; an exception, a sanitizer report, a hang or an OOM is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "schedulers/policy_registry.hpp"
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
  // `quorum:` options go to the policies' own checks, as `chorus validate` does.
  static const chorus::PolicyRegistry registry = chorus::PolicyRegistry::with_builtins();
  options.check_quorum = [](const std::string& policy, const chorus::OptionOrigin& at,
                            const chorus::PolicyOptions& quorum_options) {
    return registry.check_quorum(policy, at, quorum_options);
  };
  auto graph = chorus::parse_workflow_text(text, "fuzz.yaml", options);
  if (!graph.ok()) (void)graph.status().message().size();
  return 0;
}
