// `chorus logs` for node-local output: where a run's agents kept task output (the
// <shared log folder>/.node-logs file the AgentLauncher writes), and fetching one such file
// through the live coordinator's control socket, piece by piece.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "core/units.hpp"

namespace chorus {

struct NodeLogs {
  std::string control_endpoint;                  // the newest coordinator's; may be empty
  std::map<std::string, std::string> node_dirs;  // node -> its folder for this run
};

// Reads <shared_log_dir>/.node-logs (later lines win). Errors: not_found when the run kept no
// output on nodes.
Result<NodeLogs> read_node_logs(const std::string& shared_log_dir);

// Streams `path` on `node` to `out`, through the coordinator listening on `control_endpoint`
// (ipc://<key folder>/control.sock; the client pair is <key folder>/.control). Every piece is
// checked against what was asked (offset, length, file size) before it is passed on.
// Errors: unavailable ("the coordinator is gone": the socket is absent or refuses connections,
// or no answer within `timeout`), not_found / io_error (the agent's words: no such file, agent
// lost), invalid_argument (a malformed reply).
Status fetch_node_file(const std::string& control_endpoint, const std::string& node,
                       const std::string& path, const std::function<void(std::string_view)>& out,
                       Duration timeout = std::chrono::seconds(10));

}  // namespace chorus
