// Reads WfCommons instances (WfFormat 1.5, and the older 1.4 layout) into a WorkflowGraph.
//
// One TaskSpec per task: name = the WfCommons task id, `after` from `parents` (or, for a task that
// has no `parents` key, from the producers of its input files), per_rank.cores = coreCount
// (default 1), per_rank.memory_mb = memoryInBytes rounded up, estimate = runtimeInSeconds,
// inputs/outputs = file ids. The command is the replay placeholder `sleep <runtime>`: traces do
// not carry runnable programs.
//
// Errors (all invalid_argument unless noted, each prefixed with the path, and with the JSON path
// of the offending value when there is one: "t.json: workflow.specification.tasks[12].cores:
// 1e+300 is out of range (1..1048576)"): a missing (not_found) or unreadable (io_error) file, one
// that is not a regular file or is larger than kMaxWfCommonsFileBytes, bad JSON (with line,
// column and byte offset), a schema version other than 1.4/1.5, a number of the wrong type or out
// of range (runtimes 0..1e9 s, cores 1..1048576, bytes 0..2^53), `parents`/`inputFiles`/
// `outputFiles` that are not lists of strings, a duplicate id, a task naming an unknown parent, a
// missing runtime, a dependency cycle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"

namespace chorus {

// Traces above this size are refused before they are read (the bundled ones are at most 4 MB).
inline constexpr std::uint64_t kMaxWfCommonsFileBytes = 256 * 1024 * 1024;

struct WfCommonsInstance {
  WorkflowGraph graph;
  std::string schema_version;                               // "1.4" or "1.5"
  std::unordered_map<std::string, std::int64_t> file_size;  // file id -> bytes (-1 = unknown)
  std::size_t edge_count = 0;                               // distinct parent -> child pairs
};

// `path` is only used in messages and stored as graph.source_path.
Result<WfCommonsInstance> parse_wfcommons(std::string_view json_text, const std::string& path);

Result<WfCommonsInstance> read_wfcommons_file(const std::string& path);

// The argv the importer gives a task that ran `runtime_s` seconds: {"sleep", "<seconds>"}.
std::vector<std::string> replay_command(double runtime_s);

}  // namespace chorus
