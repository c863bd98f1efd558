// The agent: the process `chorus agent` runs on each node. It registers with the coordinator,
// runs the tasks it is sent with a LocalLauncher (process groups, output files, timeouts, cancel
// as for local tasks), and sends their final states back in batches. At each heartbeat it sends
// its node's telemetry (runtime/netprobe/: interface rates, qdisc backlog and drops, running
// cores, children's CPU, CPU quota, and the links to the probe targets the coordinator names),
// gathered on two threads of its own so that no measurement delays a task.
//
// It exits when the coordinator says so (shutdown: ok), refuses it (an error naming the reason),
// or stays silent longer than its timeout (an error): every task still running is killed first
// (its process group), so a node never keeps orphans of a coordinator that is gone.
//
// Threading: run_agent() blocks the calling thread until the agent exits.
#pragma once

#include <string>

#include "core/resources.hpp"
#include "core/status.hpp"
#include "core/units.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/netprobe/link_prober.hpp"
#include "runtime/transport/curve_keys.hpp"

namespace chorus {

struct AgentOptions {
  std::string endpoint;  // the coordinator: tcp://HOST:PORT
  AgentKeys keys;
  std::string node;    // the name this agent registers as
  Resources capacity;  // what placement may use on this node
  // Until the coordinator welcomes us, and after that unless the welcome says otherwise: exit
  // when nothing arrived from the coordinator for this long.
  Duration silence_timeout = std::chrono::seconds(30);
  // Keep task output on this node, in <log_dir>/<run id>/ (%n = the node name), instead of where
  // the coordinator says; empty: where it says. The coordinator fetches it for `chorus logs`
  // while the run lives, and this agent pushes a failed attempt's output (its last 16 MiB per
  // stream) to the coordinator before reporting the failure. Fetches may read only below it.
  std::string log_dir;
  // For benchmarks of the dispatch path alone: report every task as exited 0 at once without
  // running it. Never set by `chorus launch`.
  bool dry_run = false;
  // The bounds of the link probes to the coordinator's probe targets (docs/telemetry.md).
  netprobe::ProbeBudget probe_budget;
};

// `template_dir` with every %n replaced by `node`, made absolute.
std::string expand_node_log_dir(const std::string& template_dir, const std::string& node);

// Errors: unavailable (the coordinator never answered, or went silent: "no message from the
// coordinator at tcp://... for 30s"), invalid_argument (refused: keys not allowed, node name
// refused, protocol mismatch), io_error (a socket error), cancelled (`stop` was requested).
Status run_agent(const AgentOptions& options, CancelToken* stop = nullptr);

}  // namespace chorus
