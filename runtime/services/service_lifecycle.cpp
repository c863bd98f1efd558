#include "runtime/services/service_lifecycle.hpp"

#include <algorithm>
#include <functional>

namespace chorus {

ServiceLifecycle::ServiceLifecycle(const std::deque<ServiceSpec>& services, TaskTable& tasks,
                                   Host& host, std::string local_host)
    : services_(services),
      tasks_(tasks),
      host_(host),
      supervisor_(services, std::move(local_host)) {
  const auto count = services_.size();
  parked_.assign(count, {});
  users_left_.assign(count, 0);
  had_users_.assign(count, 0);
  stopped_.assign(count, 0);
  owned_.assign(count, 0);
}

void ServiceLifecycle::added(bool owned) {
  supervisor_.added();
  parked_.emplace_back();
  users_left_.push_back(0);
  had_users_.push_back(0);
  stopped_.push_back(0);
  owned_.push_back(owned ? 1 : 0);
}

ServiceLifecycle::Gate ServiceLifecycle::gate(TaskId id, const TaskSpec& spec, std::string& why) {
  for (ServiceId s : spec.uses) {
    if (const std::string* failure = supervisor_.failure(s)) {
      why = "service '" + services_[s].name + "' is not available: " + *failure;
      return Gate::failed;
    }
    if (!supervisor_.up(s)) {
      park(s, id);
      return Gate::parked;
    }
  }
  return Gate::open;
}

void ServiceLifecycle::poll(TimePoint now) {
  notices_.clear();
  supervisor_.poll(now, notices_);
  for (auto& n : notices_) {
    const auto& r = tasks_[n.task];
    if (r.state != TaskState::running) continue;
    if (n.kind == ServiceNotice::Kind::ready) {
      host_.journal_ready(n.task, n.text);
      if (supervisor_.up(n.service)) wake_users(n.service, now);
    } else if (r.launched && !r.stopping) {
      startup_failures_.emplace_back(n.task, std::move(n.text));
      host_.stop_attempt(n.task);
    }
  }
}

void ServiceLifecycle::wake_users(ServiceId s, TimePoint now) {
  std::vector<TaskId> waiting;
  waiting.swap(parked_[s]);
  for (TaskId id : waiting) {
    if (tasks_.forgotten(id)) continue;  // cancelled while parked, and its run forgotten since
    auto& r = tasks_[id];
    if (!r.parked || r.state != TaskState::pending) continue;
    r.parked = false;
    host_.unblocked(id, now);  // may park it again behind another service
  }
}

void ServiceLifecycle::on_end(TaskId id, TaskState state, int code, std::string message,
                              TimePoint now) {
  const TaskSpec& spec = host_.spec_of(id);
  const ServiceSpec& svc = services_[spec.service];
  auto& r = tasks_[id];
  supervisor_.ended(spec);
  if (r.stopping) {
    host_.finish(id, TaskState::succeeded, code, {}, now);  // stopped because nothing needs it
    return;
  }
  if (host_.cancelling()) {
    host_.finish(id, TaskState::cancelled, code, "run cancelled", now);
    return;
  }
  auto failure = std::find_if(startup_failures_.begin(), startup_failures_.end(),
                              [&](const auto& f) { return f.first == id; });
  if (failure != startup_failures_.end()) {
    state = TaskState::failed;
    message = std::move(failure->second);
    startup_failures_.erase(failure);
  } else if (state == TaskState::succeeded) {
    message = "exited with status 0 while tasks still needed it";
  }
  const bool crashed = state != TaskState::succeeded;
  const bool wanted = svc.restart.when == RestartWhen::always ||
                      (svc.restart.when == RestartWhen::on_failure && crashed);
  const bool allowed = r.attempt <= static_cast<std::uint32_t>(svc.restart.max_restarts);
  if (wanted && allowed && !host_.stopping_new_work() && stopped_[spec.service] == 0) {
    const Duration wait = restart_backoff(svc.restart, static_cast<int>(r.attempt));
    // The attempt is journaled by its exit (succeeded for status 0); in the table it ends as
    // failed either way (a replica that exits while tasks need it failed at its job), and the
    // restart is a new attempt that waits for its back-off in pending (core/task_state.hpp).
    host_.journal(id, crashed ? TaskState::failed : TaskState::succeeded, code,
                  message + " (restart " + std::to_string(r.attempt) + " of " +
                      std::to_string(svc.restart.max_restarts) + " in " + format_duration(wait) +
                      ")");
    if (tasks_.move(id, TaskState::failed)) tasks_.move(id, TaskState::pending);
    delayed_.emplace_back(now + wait, id);
    std::push_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
    return;
  }
  std::string why = "replica '" + spec.name + "' " + message;
  if (wanted && !allowed) {
    why += " after " + std::to_string(svc.restart.max_restarts) + " restart(s)";
  }
  host_.finish(id, crashed ? state : TaskState::succeeded, code, message, now);
  service_failed(spec.service, why, now);
}

Duration ServiceLifecycle::restart_backoff(const RestartPolicy& p, int restart) {
  double wait = std::chrono::duration<double>(p.backoff).count();
  for (int i = 1; i < restart; ++i) wait *= p.factor;
  const double cap = std::chrono::duration<double>(p.max_backoff).count();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(std::min(wait, cap)));
}

void ServiceLifecycle::service_failed(ServiceId s, const std::string& why, TimePoint now) {
  supervisor_.fail(s, why);
  std::vector<TaskId> waiting;
  waiting.swap(parked_[s]);
  for (TaskId id : waiting) {
    if (tasks_.forgotten(id)) continue;  // cancelled while parked, and its run forgotten since
    auto& r = tasks_[id];
    if (!r.parked || r.state != TaskState::pending) continue;
    r.parked = false;
    host_.finish(id, TaskState::failed, -1,
                 "service '" + services_[s].name + "' is not available: " + why, now);
  }
  stop_service(s);
}

void ServiceLifecycle::stop_service(ServiceId s) {
  stopped_[s] = 1;
  const ServiceSpec& svc = services_[s];
  for (TaskId id : svc.replica_tasks) {
    auto& r = tasks_[id];
    if (r.state == TaskState::running) {
      if (!r.stopping) {
        r.stopping = true;
        if (r.launched) host_.stop_attempt(id);
      }
    } else if (!is_terminal(r.state)) {
      host_.cancel_unstarted(id, "not started: no task needs service '" + svc.name + "' any more");
      ++not_needed_;
    }
  }
}

bool ServiceLifecycle::stop_unneeded(bool may_grow, bool handlers_pending) {
  const bool work_left = tasks_.work_left();
  bool any = false;
  for (ServiceId s = 0; s < services_.size(); ++s) {
    if (stopped_[s] != 0 || owned_[s] != 0) continue;
    bool needed = may_grow ? work_left || handlers_pending
                           : (had_users_[s] != 0 ? users_left_[s] > 0 : work_left);
    if (needed) continue;
    stop_service(s);
    any = true;
  }
  return any;
}

void ServiceLifecycle::release_delayed(TimePoint now) {
  while (!delayed_.empty() && delayed_.front().first <= now) {
    std::pop_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
    TaskId id = delayed_.back().second;
    delayed_.pop_back();
    if (tasks_.state(id) != TaskState::pending) continue;
    if (stopped_[host_.spec_of(id).service] != 0 || host_.stopping_new_work()) {
      host_.cancel_unstarted(id, "not restarted: the run is stopping");
      continue;
    }
    host_.make_ready(id, now);
  }
}

bool ServiceLifecycle::only_ready_services_running() const {
  if (!delayed_.empty()) return false;
  std::int64_t replicas = 0;
  for (const auto& svc : services_) {
    for (TaskId id : svc.replica_tasks) {
      const auto& r = tasks_[id];
      if (r.state != TaskState::running) continue;
      if (r.stopping || !supervisor_.ready(host_.spec_of(id))) return false;
      ++replicas;
    }
  }
  return replicas > 0 && replicas == tasks_.progress().running;
}

std::optional<TimePoint> ServiceLifecycle::next_deadline() const {
  std::optional<TimePoint> d = supervisor_.next_deadline();
  if (!delayed_.empty() && (!d || delayed_.front().first < *d)) d = delayed_.front().first;
  return d;
}

}  // namespace chorus
