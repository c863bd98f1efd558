// TelemetrySampler: the node's collectors (interface rates, qdisc backlog and drops, children's
// CPU, CPU quota) sampled every `interval` on a thread of their own, so that reading /proc and
// rtnetlink never delays the agent's task handling; the agent takes the latest figures when it
// sends its telemetry (at the heartbeat cadence). The thread is started in the caller's network
// namespace (a thread inherits its creator's): the agent's.
//
// A collector that fails (no rtnetlink, /proc unreadable) leaves its figures NaN; the others go
// on.
//
// Threading: set_process_groups() and latest() from any thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/units.hpp"
#include "runtime/netprobe/agent_telemetry.hpp"

namespace chorus::netprobe {

class TelemetrySampler {
 public:
  explicit TelemetrySampler(Duration interval = std::chrono::seconds(1));
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  // The running tasks' process groups (their CPU is the children's CPU).
  void set_process_groups(std::vector<int> pgids);
  // The node figures of the last sample (links and running cores are not the sampler's: left
  // as they are in `out`).
  void latest(AgentTelemetry& out) const;

 private:
  void run();

  Duration interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<int> pgids_;
  AgentTelemetry figures_;
  std::thread thread_;
};

}  // namespace chorus::netprobe
