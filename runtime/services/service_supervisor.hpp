// ServiceSupervisor: what the coordinator knows about its services between launches — which
// replicas are being probed, which are ready and at what endpoint, which services failed for good.
//
// It launches, stops and journals nothing itself: the coordinator does that (so every change is
// journaled before it is acted on) and tells the supervisor what happened. Called from the
// coordinator's thread only.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/service_spec.hpp"
#include "core/units.hpp"
#include "runtime/services/readiness_probe.hpp"

namespace chorus {

// A replica that passed its probe is journaled as a second 'running' event of its attempt whose
// detail is this prefix followed by the endpoint (`chorus endpoints` reads it back).
inline constexpr std::string_view kReadyDetailPrefix = "ready at ";

struct ServiceNotice {
  enum class Kind : std::uint8_t {
    ready,            // the replica passed its probe; text = its endpoint
    startup_timeout,  // it did not within the start-up timeout; text = why, for the user
  };
  Kind kind = Kind::ready;
  TaskId task = kNoTask;
  ServiceId service = kNoService;
  std::string text;
};

class ServiceSupervisor {
 public:
  // `local_host`: node names that mean this machine are probed at 127.0.0.1 (a service bound to
  // the loopback interface is reachable there and nowhere else).
  // `services` may grow (a served instance adds each run's services): call added() after.
  ServiceSupervisor(const std::deque<ServiceSpec>& services, std::string local_host);
  ~ServiceSupervisor();

  // services.back() was added.
  void added();

  // A replica was handed to its launcher: probing starts. `node`: where it runs, as a host to
  // probe and to give users (the node's address when known, else its name). `reported` set: the
  // launcher checks readiness itself and says where the replica listens (Launcher::readiness).
  void started(const TaskSpec& replica, const std::string& node, const std::string& stdout_path,
               const std::string& workdir, TimePoint now, ReadinessReport reported = {});
  // A replica's attempt ended, for any reason: it is not ready any more.
  void ended(const TaskSpec& replica);

  // Runs the probes that are due; appends what changed.
  void poll(TimePoint now, std::vector<ServiceNotice>& out);
  // When poll() must run next (nullopt: nothing is being probed).
  std::optional<TimePoint> next_deadline() const;

  // This replica passed its probe and has not ended since.
  bool ready(const TaskSpec& replica) const {
    return state_[replica.service].replicas[static_cast<std::size_t>(replica.replica)].ready;
  }
  // Every replica of `s` is ready.
  bool up(ServiceId s) const;
  // The replicas' endpoints in replica order, comma-separated (valid while up()).
  const std::string& endpoints(ServiceId s) const;
  // Marks `s` failed for good; tasks that use it must fail with failure(s).
  void fail(ServiceId s, std::string why);
  // Why `s` failed for good, or nullptr.
  const std::string* failure(ServiceId s) const;

  const ServiceSpec& spec(ServiceId s) const { return services_[s]; }

 private:
  struct Replica {
    std::unique_ptr<ReadinessProbe> probe;  // set while starting
    TimePoint deadline{};                   // start-up timeout
    std::string endpoint;                   // set once ready
    bool ready = false;
  };
  struct State {
    std::vector<Replica> replicas;
    int ready = 0;
    int probing = 0;      // replicas with a probe
    bool listed = false;  // in probing_
    std::string endpoints;
    std::optional<std::string> failure;
  };

  void end_probe(State& st, Replica& r) {
    if (!r.probe) return;
    r.probe.reset();
    --st.probing;
  }

  const std::deque<ServiceSpec>& services_;
  std::string local_host_;
  std::vector<State> state_;
  // The services with a replica being probed (a few, of however many the instance has seen):
  // what poll() and next_deadline() walk. Entries whose probing fell to 0 leave at the next poll.
  std::vector<ServiceId> probing_;
};

}  // namespace chorus
