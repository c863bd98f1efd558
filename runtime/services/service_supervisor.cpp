#include "runtime/services/service_supervisor.hpp"

namespace chorus {

ServiceSupervisor::ServiceSupervisor(const std::deque<ServiceSpec>& services,
                                     std::string local_host)
    : services_(services), local_host_(std::move(local_host)) {
  state_.reserve(services.size());
  while (state_.size() < services.size()) added();
}

void ServiceSupervisor::added() {
  State& st = state_.emplace_back();
  st.replicas.resize(static_cast<std::size_t>(std::max(services_[state_.size() - 1].replicas, 0)));
}

ServiceSupervisor::~ServiceSupervisor() = default;

void ServiceSupervisor::started(const TaskSpec& replica, const std::string& node,
                                const std::string& stdout_path, const std::string& workdir,
                                TimePoint now, ReadinessReport reported) {
  const ServiceSpec& svc = services_[replica.service];
  State& st = state_[replica.service];
  Replica& r = st.replicas[static_cast<std::size_t>(replica.replica)];
  ProbeTarget target;
  target.host = node.empty() || node == local_host_ || node == "localhost" ? "127.0.0.1" : node;
  target.port = svc.ready.port + replica.replica;
  target.stdout_path = stdout_path;
  target.workdir = workdir;
  target.reported = std::move(reported);
  if (!r.probe) ++st.probing;
  r.probe = std::make_unique<ReadinessProbe>(svc.ready, std::move(target));
  if (!st.listed) {
    st.listed = true;
    probing_.push_back(replica.service);
  }
  r.deadline = now + svc.startup_timeout;
  r.ready = false;
  r.endpoint.clear();
}

void ServiceSupervisor::ended(const TaskSpec& replica) {
  State& st = state_[replica.service];
  Replica& r = st.replicas[static_cast<std::size_t>(replica.replica)];
  end_probe(st, r);
  if (r.ready) {
    r.ready = false;
    --st.ready;
  }
}

void ServiceSupervisor::poll(TimePoint now, std::vector<ServiceNotice>& out) {
  std::size_t kept = 0;
  for (const ServiceId s : probing_) {
    State& st = state_[s];
    if (st.probing == 0) {
      st.listed = false;
      continue;
    }
    probing_[kept++] = s;
    for (std::size_t i = 0; i < st.replicas.size(); ++i) {
      Replica& r = st.replicas[i];
      if (!r.probe || r.probe->next_check() > now) continue;
      const TaskId task = services_[s].replica_tasks[i];
      if (auto endpoint = r.probe->check(now)) {
        end_probe(st, r);
        r.ready = true;
        r.endpoint = std::move(*endpoint);
        ++st.ready;
        if (st.ready == static_cast<int>(st.replicas.size())) {
          st.endpoints.clear();
          for (const auto& rep : st.replicas) {
            if (!st.endpoints.empty()) st.endpoints += ',';
            st.endpoints += rep.endpoint;
          }
        }
        out.push_back(
            ServiceNotice{ServiceNotice::Kind::ready, task, static_cast<ServiceId>(s), r.endpoint});
      } else if (now >= r.deadline) {
        std::string why = "not ready after " + format_duration(services_[s].startup_timeout) +
                          " (" + to_string(services_[s].ready.kind) +
                          " probe: " + r.probe->last_error() + ")";
        end_probe(st, r);
        out.push_back(ServiceNotice{ServiceNotice::Kind::startup_timeout, task,
                                    static_cast<ServiceId>(s), std::move(why)});
      }
    }
  }
  probing_.resize(kept);
}

std::optional<TimePoint> ServiceSupervisor::next_deadline() const {
  std::optional<TimePoint> next;
  for (const ServiceId s : probing_) {
    for (const auto& r : state_[s].replicas) {
      if (!r.probe) continue;
      TimePoint t = std::min(r.probe->next_check(), r.deadline);
      if (!next || t < *next) next = t;
    }
  }
  return next;
}

bool ServiceSupervisor::up(ServiceId s) const {
  return !state_[s].failure && state_[s].ready == static_cast<int>(state_[s].replicas.size());
}

const std::string& ServiceSupervisor::endpoints(ServiceId s) const {
  return state_[s].endpoints;
}

void ServiceSupervisor::fail(ServiceId s, std::string why) {
  if (!state_[s].failure) state_[s].failure = std::move(why);
}

const std::string* ServiceSupervisor::failure(ServiceId s) const {
  return state_[s].failure ? &*state_[s].failure : nullptr;
}

}  // namespace chorus
