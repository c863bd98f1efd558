// LinkProber: round trip and achievable bandwidth from this node to each probe target (the
// run's data sources), measured by bounded active probes on a thread of its own.
//
// Why a thread and not the agent's poll loop: a probe is a timed blocking exchange (DataClient)
// that must not wait behind the agent's task handling (that would inflate its times), and the
// agent's loop must never wait behind a probe; one thread sleeping on a condition variable
// between probes costs nothing. Targets are probed one after the other: a target that does not
// answer delays the others by at most its timeouts (ProbeBudget::timeout).
//
// Per target (SourceProbe::data_server):
// - rtt: a PING on a kept connection every `rtt_interval` (SourceProbe::connect: the TCP
//   connect time, every `connect_interval`; no bandwidth then).
// - down / up: a timed GET / PUT, in two parts back to back (DataClient::get_after /
//   put_after): a third of the bytes lead in, and the rate is the rest over its own time, so
//   neither the round trip nor a shaper's burst (a token bucket let through at line rate) is in
//   it. The latest measurement is reported (what is achievable now, with today's congestion).
// - The budget, per direction: capacity = the highest rate measured so far on that link by a
//   probe long enough to count (below). Probe bytes (both parts) are paid from a token bucket
//   filled at `fraction` (1%) of the capacity; a probe starts only when the bucket holds its
//   size, except the very first (`first_bytes`, on credit: the bucket starts that far below
//   zero). So the bytes probed up to any time after the first repayment are at most
//   `fraction` x capacity x time. The timed part lasts max(`min_seconds`, 4 rtt) at the
//   capacity; a probe is at least `min_bytes`, at most `max_bytes`, and grows at most 4x per
//   probe while probes are too short to count.
// - Long enough to count: a timed part of at least 0.8 x the intended duration (or the
//   largest size). A shorter one sizes the next probe and fills the budget at its rate until
//   a long one counts, but never becomes the capacity.
// - A target that fails: its figures keep their values and measured time (their age grows);
//   it is retried after 1 s, doubling up to 60 s.
//
// Threading: set_targets() and snapshot() from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/data_movement.hpp"
#include "core/units.hpp"
#include "runtime/netprobe/agent_telemetry.hpp"

namespace chorus::netprobe {

struct ProbeBudget {
  double fraction = 0.01;
  double min_seconds = 0.05;
  std::uint64_t min_bytes = 64 * 1024;
  std::uint64_t first_bytes = 64 * 1024;
  std::uint64_t max_bytes = 8ULL << 20;
  Duration rtt_interval = std::chrono::seconds(1);
  Duration connect_interval = std::chrono::seconds(5);
  Duration timeout = std::chrono::seconds(3);
};

struct ProbeTarget {
  std::string name;
  std::string host;
  int port = 0;
  SourceProbe probe = SourceProbe::data_server;
};

// What one link's probes have spent and found (tests, docs/telemetry.md's measurement).
struct LinkProbeStats {
  std::uint64_t down_bytes = 0, up_bytes = 0;  // GET / PUT payload
  std::uint64_t down_probes = 0, up_probes = 0;
  double down_capacity_Bps = 0, up_capacity_Bps = 0;
  std::uint64_t failures = 0;
};

class LinkProber {
 public:
  explicit LinkProber(ProbeBudget budget = {});
  ~LinkProber();  // stops and joins the thread (within the budget's timeouts)
  LinkProber(const LinkProber&) = delete;
  LinkProber& operator=(const LinkProber&) = delete;

  // Replaces the targets (a new run's sources): the old links' figures are forgotten.
  void set_targets(std::vector<ProbeTarget> targets, std::uint32_t generation);
  // The figures now, ages counted to `now_s` (steady seconds), into `out.links` and
  // `out.targets_generation`.
  void snapshot(AgentTelemetry& out, double now_s) const;
  std::vector<LinkProbeStats> stats() const;

 private:
  struct Link;
  void run();
  // One step for `link`: what is due now; returns when it is next due (steady seconds).
  double step(Link& link, double now);
  void probe_rtt(Link& link, double now);
  void probe_transfer(Link& link, bool down, double now);
  void failed(Link& link, double now);

  ProbeBudget budget_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool changed_ = false;
  std::uint32_t generation_ = 0;
  std::vector<ProbeTarget> pending_;  // set_targets' list, taken by the thread
  // Replaced only by the thread (under mu_); figures read under mu_.
  std::vector<std::unique_ptr<Link>> links_;
  std::thread thread_;
};

}  // namespace chorus::netprobe
