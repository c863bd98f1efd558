#include "adapters/kubernetes/pod_launcher.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "adapters/kubernetes/run_objects.hpp"

namespace chorus::kube {
namespace {

std::string env_value(const KeyValues& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key) return v;
  return {};
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr const char* kBackgroundDelete =
    R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";

}  // namespace

PodLauncher::PodLauncher(PodLauncherOptions options)
    : options_(std::move(options)),
      namespace_(options_.namespace_name.empty() ? options_.config.namespace_name
                                                 : options_.namespace_name),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  thread_ = std::thread([this] { worker(); });
}

PodLauncher::~PodLauncher() {
  (void)shutdown(std::chrono::seconds(0));
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  watch_.reset();
  logs_.reset();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

int PodLauncher::wait_fd() const {
  return wake_fd_;
}

void PodLauncher::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void PodLauncher::deliver(Done d) {
  {
    std::lock_guard lock(mu_);
    done_.push_back(std::move(d));
  }
  wake();
}

void PodLauncher::post(std::function<void(KubeClient&)> job) {
  staged_.push_back(std::move(job));
}

void PodLauncher::flush() {
  if (staged_.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& j : staged_) jobs_.push_back(std::move(j));
  }
  staged_.clear();
  cv_.notify_one();
}

void PodLauncher::worker() {
  KubeClient client(options_.config);
  std::uint64_t seen = 0;
  for (;;) {
    std::function<void(KubeClient&)> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      // Stopping: what is queued is dropped. shutdown() has deleted the run's Pods with one
      // request already, and against a server that hangs each job would cost its timeouts.
      if (stopping_ || jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job(client);
    worker_requests_ += client.requests() - seen;
    seen = client.requests();
  }
}

Result<LaunchHandle> PodLauncher::launch(const LaunchRequest& request) {
  if (request.run_as != nullptr) {
    return invalid_argument("this site runs tasks as the coordinator's own user only, not as " +
                            request.run_as->name);
  }
  if (run_.empty()) {
    run_ = label_value(env_value(request.env, "CHORUS_RUN_ID"));
    if (run_.empty())
      return invalid_argument("the Kubernetes launcher needs CHORUS_RUN_ID in the request");
    token_ = label_value(env_value(request.env, "CHORUS_RUN_TOKEN"));
    selector_ = token_.empty() ? "chorus.run%3D" + run_ : token_selector(token_);
    // The token's head in Pod and Service names: two runs with one id in a namespace never
    // collide.
    name_stem_ = token_.empty() ? run_ : run_ + "-" + token_.substr(0, 8);
    watch_ = std::make_unique<PodWatch>(options_.config, namespace_, selector_, wake_fd_,
                                        options_.give_up);
    watch_->start();
    logs_ = std::make_unique<LogFollower>(options_.config, namespace_, wake_fd_);
  }
  LaunchHandle h = next_++;
  Attempt a;
  a.task = request.spec->id;
  a.attempt = request.attempt;
  a.pod = pod_name(name_stem_, request.spec->id, request.attempt);
  a.stdout_path = request.stdout_path;
  a.grace = request.spec->kill_grace.count() > 0 ? request.spec->kill_grace : options_.kill_grace;
  if (request.spec->timeout.count() > 0) a.deadline = Clock::now() + request.spec->timeout;
  if (request.service != nullptr)
    if (Status s = prepare_service(request, h, a); !s.ok()) return s;
  PodNaming naming{run_,
                   token_,
                   options_.default_image,
                   options_.owner,
                   options_.workdir_claim,
                   options_.kill_grace};
  auto manifest = std::make_shared<const std::string>(pod_manifest(request, naming, a.pod).dump());
  a.manifest = manifest;
  by_pod_[a.pod] = h;
  std::string pod = a.pod;
  attempts_.emplace(h, std::move(a));
  Adoption adoption{request.spec, request.attempt};
  post([this, h, manifest, pod, adoption](KubeClient& c) {
    if (!listed_) list_previous(c);
    Done d;
    d.handle = h;
    d.adopted = take_adoptable(adoption);
    if (!d.adopted.empty()) {
      take_ownership(c, "pods", d.adopted);
      deliver(std::move(d));
      return;
    }
    create_now(c, h, pod, *manifest);
  });
  return h;
}

void PodLauncher::create_now(KubeClient& c, LaunchHandle h, const std::string& pod,
                             const std::string& manifest) {
  auto r = c.raw("POST", "/api/v1/namespaces/" + namespace_ + "/pods", manifest);
  Status s;
  if (!r)
    s = r.status();
  else if (r->code == 409)
    s = create_conflict(c, pod);
  else if (r->code < 200 || r->code >= 300)
    s = http_error(*r, "create pods in namespace " + namespace_, c.config());
  if (s.ok()) return;
  Done d;
  d.handle = h;
  d.update.kind = UpdateKind::exited;
  d.update.exit_code = 127;
  d.update.message = s.message();
  deliver(std::move(d));
}

void PodLauncher::post_create(LaunchHandle h, const std::string& pod,
                              std::shared_ptr<const std::string> manifest) {
  post([this, h, pod, manifest](KubeClient& c) { create_now(c, h, pod, *manifest); });
}

void PodLauncher::readmit(LaunchHandle h, Attempt& a) {
  delete_pod(a.pod, Duration{0});  // the refused Pod: nothing ran in it
  by_pod_.erase(a.pod);
  ++a.readmits;
  a.pod = readmit_name(pod_name(name_stem_, a.task, a.attempt), a.readmits);
  by_pod_[a.pod] = h;
  a.readmit_at = Clock::now() + std::chrono::milliseconds(250) * (1 << std::min(a.readmits - 1, 4));
}

void PodLauncher::list_previous(KubeClient& c) {
  listed_ = true;
  auto l = c.request("GET", "/api/v1/namespaces/" + namespace_ + "/pods?labelSelector=" + selector_,
                     nullptr, "list pods in namespace " + namespace_);
  if (!l || !(*l)["items"].is_array()) return;  // nothing to adopt; the creates say what is wrong
  for (auto& pod : (*l)["items"]) {
    const auto notes = pod["metadata"].value("annotations", nlohmann::json::object());
    if (notes.value("chorus.kind", "") == "service") {
      // A service restarts on resume, as on every backend: its old replica must not hold the
      // node's cores beside the new one.
      std::string name = pod["metadata"].value("name", "");
      (void)c.raw("DELETE", "/api/v1/namespaces/" + namespace_ + "/pods/" + name,
                  kBackgroundDelete);
      continue;
    }
    previous_[notes.value("chorus.task-name", "")].push_back(std::move(pod));
  }
}

void PodLauncher::take_ownership(KubeClient& c, const std::string& collection,
                                 const std::string& name) {
  if (options_.owner.empty()) return;
  const nlohmann::json patch = {
      {"metadata", {{"ownerReferences", owner_references(options_.owner)}}}};
  auto r = c.raw("PATCH", "/api/v1/namespaces/" + namespace_ + "/" + collection + "/" + name,
                 patch.dump(), "application/merge-patch+json");
  Status s;
  if (!r)
    s = r.status();
  else if (r->code < 200 || r->code >= 300)
    s = http_error(*r, "patch " + collection + " in namespace " + namespace_, c.config());
  if (s.ok()) return;
  std::lock_guard lock(mu_);
  ownership_problem_ += (ownership_problem_.empty() ? "" : "; ") + collection + "/" + name +
                        " still names the earlier coordinator's Pod as its owner (deleting that "
                        "Pod deletes it): " +
                        s.message();
}

std::string PodLauncher::ownership_problem() const {
  std::lock_guard lock(mu_);
  return ownership_problem_;
}

std::string PodLauncher::take_adoptable(const Adoption& a) {
  auto it = previous_.find(a.spec->name);
  if (it == previous_.end()) return {};
  for (auto& pod : it->second) {
    if (!adoptable(pod, *a.spec, a.attempt)) continue;
    std::string name = pod["metadata"].value("name", "");
    pod = nullptr;  // adopted once
    return name;
  }
  return {};
}

Status PodLauncher::create_conflict(KubeClient& c, const std::string& pod) {
  // Ours when its create was retried after the server took it; else another's Pod by that name.
  auto got = c.request("GET", "/api/v1/namespaces/" + namespace_ + "/pods/" + pod, nullptr,
                       "get pods in namespace " + namespace_);
  if (got &&
      (*got)["metadata"].value("labels", nlohmann::json::object()).value("chorus.token", "") ==
          token_)
    return {};
  return Status(ErrorCode::unavailable,
                "a Pod named " + pod + " already exists in namespace " + namespace_ +
                    " and is not this run's; delete it or use another namespace");
}

void PodLauncher::delete_pod(const std::string& pod, Duration grace) {
  std::string path = "/api/v1/namespaces/" + namespace_ + "/pods/" + pod;
  post([path, body = delete_options(grace)](KubeClient& c) { (void)c.raw("DELETE", path, body); });
}

void PodLauncher::finish(LaunchHandle h, UpdateKind kind, int code, std::string message,
                         std::vector<StateUpdate>& out) {
  auto it = attempts_.find(h);
  if (it == attempts_.end()) return;
  StateUpdate u;
  u.task = it->second.task;
  u.attempt = it->second.attempt;
  u.kind = kind;
  u.exit_code = code;
  u.message = std::move(message);
  u.end_time = wall_now();
  out.push_back(std::move(u));
  by_pod_.erase(it->second.pod);
  attempts_.erase(it);
}

void PodLauncher::adopt(LaunchHandle h, const std::string& pod, std::vector<StateUpdate>& out) {
  auto it = attempts_.find(h);
  if (it == attempts_.end()) return;  // cancelled meanwhile: its own Pod was never created
  by_pod_.erase(it->second.pod);
  it->second.pod = pod;
  by_pod_[pod] = h;
  if (auto seen = unclaimed_.find(pod); seen != unclaimed_.end()) {
    nlohmann::json state = std::move(seen->second);
    unclaimed_.erase(seen);
    on_pod(h, "MODIFIED", state, out);
  }
}

namespace {

bool container_started(const nlohmann::json& pod) {
  const auto status = pod.value("status", nlohmann::json::object());
  for (const auto& c : status.value("containerStatuses", nlohmann::json::array())) {
    const auto state = c.value("state", nlohmann::json::object());
    if (state.contains("running") || state.contains("terminated")) return true;
  }
  return false;
}

}  // namespace

void PodLauncher::on_pod(LaunchHandle h, const std::string& type, const nlohmann::json& pod,
                         std::vector<StateUpdate>& out) {
  Attempt& a = attempts_.at(h);
  if (a.ending) return;
  if (a.service) track_readiness(a, pod);
  auto o = pod_outcome(pod);
  if (o && kubelet_refused(pod)) {
    if (a.readmits < kMaxReadmits) {
      readmit(h, a);
      return;
    }
    o->message += " (refused " + std::to_string(a.readmits + 1) +
                  " times: something outside this run holds the node's resources)";
  }
  if (!o && type == "DELETED") {
    finish(h, UpdateKind::lost, 0, "its Pod " + a.pod + " was deleted by someone else", out);
    return;
  }
  if (!o) {
    if (a.follows == 0 && !a.follow_at && !a.stdout_path.empty() && container_started(pod))
      a.follow_at = Clock::now() + kFollowAfter;  // poll() starts the stream then
    return;
  }
  a.ending = true;
  if (a.following) {
    a.outcome = *o;  // reported when its stream ends: the container's end closes it
    return;
  }
  report(h, *o);
}

void PodLauncher::on_log_ended(const EndedLog& e) {
  auto p = by_pod_.find(e.pod);
  if (p == by_pod_.end()) return;  // cancelled, timed out or lost meanwhile
  LaunchHandle h = p->second;
  Attempt& a = attempts_.at(h);
  a.following = false;
  if (a.outcome) {
    PodOutcome o = *a.outcome;
    report(h, o);
  } else if (!e.complete && a.follows < 3) {
    logs_->follow(a.pod, a.stdout_path);  // the connection dropped while the task runs
    ++a.follows;
    a.following = true;
  }
}

void PodLauncher::report(LaunchHandle h, const PodOutcome& o) {
  Attempt& a = attempts_.at(h);
  // The log, then the final update: both from the worker, so the coordinator reads the task's
  // output file only once it is complete. Fetched even after a stream that ended well: the
  // kubelet ends a followed log when the container exits, sometimes before the container's last
  // lines reached the log file (kubernetes/kubernetes#36567; seen here on 1.20 as a missing last
  // line of an adopted Pod), so only a read after the end is the whole log.
  std::string path = "/api/v1/namespaces/" + namespace_ + "/pods/" + a.pod + "/log";
  std::string file = a.stdout_path;
  post([this, h, path, file, o](KubeClient& c) {
    auto r = c.raw("GET", path);
    // A fetch that failed (the server away, the Pod gone) keeps what the stream wrote.
    const bool got = r && r->code == 200;
    if (!file.empty() && (got || !std::filesystem::exists(file))) {
      std::ofstream f(file, std::ios::binary | std::ios::trunc);
      if (got) f << r->body;
    }
    Done d;
    d.handle = h;
    d.update.kind = o.kind;
    d.update.exit_code = o.exit_code;
    d.update.message = o.message;
    deliver(std::move(d));
  });
}

void PodLauncher::poll(std::vector<StateUpdate>& out) {
  std::uint64_t drained = 0;
  [[maybe_unused]] auto n = ::read(wake_fd_, &drained, sizeof drained);
  std::vector<Done> done;
  {
    std::lock_guard lock(mu_);
    done.swap(done_);
    for (auto& u : cancelled_) out.push_back(std::move(u));
    cancelled_.clear();
  }
  for (auto& d : done) {
    if (!d.adopted.empty())
      adopt(d.handle, d.adopted, out);
    else
      finish(d.handle, d.update.kind, d.update.exit_code, std::move(d.update.message), out);
  }

  if (watch_) {
    std::vector<PodEvent> events;
    watch_->take(events);
    for (auto& e : events) {
      std::string name = e.pod["metadata"].value("name", "");
      auto p = by_pod_.find(name);
      if (p != by_pod_.end()) {
        on_pod(p->second, e.type, e.pod, out);
      } else if (e.type == "DELETED") {
        unclaimed_.erase(name);
      } else {
        unclaimed_[name] = std::move(e.pod);
      }
    }
    std::vector<EndedLog> ended;
    logs_->take_ended(ended);
    for (const auto& e : ended) on_log_ended(e);
    if (std::string why = watch_->failed(); !why.empty()) {
      std::vector<LaunchHandle> all;
      for (const auto& [h, a] : attempts_)
        if (!a.ending) all.push_back(h);
      for (auto h : all) finish(h, UpdateKind::lost, 0, why, out);
    }
  }
  // One pass over the attempts: streams of the containers that have run kFollowAfter (a task
  // that ends sooner is fetched once at its end and costs no stream), Pods made again after a
  // kubelet refusal once their back-off is over, and timeouts (the Pod deleted, reported now).
  auto now = Clock::now();
  std::vector<LaunchHandle> expired;
  for (auto& [h, a] : attempts_) {
    if (a.ending) continue;
    if (logs_ && a.follow_at && now >= *a.follow_at && a.follows == 0) {
      logs_->follow(a.pod, a.stdout_path);
      a.follows = 1;
      a.following = true;
    }
    if (a.readmit_at && now >= *a.readmit_at) {
      a.readmit_at.reset();
      auto manifest = nlohmann::json::parse(*a.manifest);
      manifest["metadata"]["name"] = a.pod;
      a.manifest = std::make_shared<const std::string>(manifest.dump());
      post_create(h, a.pod, a.manifest);
    }
    if (a.deadline && now >= *a.deadline) expired.push_back(h);
  }
  for (auto h : expired) {
    const Attempt& a = attempts_.at(h);
    delete_pod(a.pod, a.grace);
    finish(h, UpdateKind::timed_out, 0, "timed out; its Pod deleted", out);
  }
  flush();
}

Status PodLauncher::cancel(LaunchHandle handle) {
  auto it = attempts_.find(handle);
  if (it == attempts_.end()) return {};
  delete_pod(it->second.pod, it->second.grace);
  flush();
  StateUpdate u;
  u.task = it->second.task;
  u.attempt = it->second.attempt;
  u.kind = UpdateKind::cancelled;
  u.message = "cancelled; its Pod deleted";
  u.end_time = wall_now();
  by_pod_.erase(it->second.pod);
  attempts_.erase(it);
  {
    std::lock_guard lock(mu_);
    cancelled_.push_back(std::move(u));
  }
  wake();
  return {};
}

std::optional<TimePoint> PodLauncher::next_deadline() const {
  std::optional<TimePoint> next;
  for (const auto& [h, a] : attempts_) {
    if (a.ending) continue;
    if (a.deadline && (!next || *a.deadline < *next)) next = a.deadline;
    if (a.follow_at && a.follows == 0 && (!next || *a.follow_at < *next)) next = a.follow_at;
    if (a.readmit_at && (!next || *a.readmit_at < *next)) next = a.readmit_at;
  }
  return next;
}

std::uint64_t PodLauncher::requests() const {
  return worker_requests_.load() + (watch_ ? watch_->requests() : 0) +
         (logs_ ? logs_->requests() : 0);
}

Status PodLauncher::shutdown(std::chrono::seconds wait) {
  if (run_.empty() || shut_down_) return {};
  shut_down_ = true;
  KubeClient c(options_.config);
  c.set_retries(1);
  std::string path = "/api/v1/namespaces/" + namespace_ + "/pods?labelSelector=" + selector_;
  auto r = c.raw("DELETE", path, kBackgroundDelete);
  if (!r) return r.status();
  if (r->code < 200 || r->code >= 300)
    return http_error(*r, "delete pods in namespace " + namespace_, c.config());
  if (Status s = delete_services(c); !s.ok()) return s;
  std::uint64_t counted = 0;
  auto until = std::chrono::steady_clock::now() + wait;
  std::size_t left = 0;
  do {
    auto l = c.request("GET", path, nullptr, "list pods in namespace " + namespace_);
    worker_requests_ += c.requests() - counted;  // counted like the worker's: ours too
    counted = c.requests();
    if (!l) return l.status();
    left = (*l)["items"].size();
    if (left == 0) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  } while (std::chrono::steady_clock::now() < until);
  return Status(ErrorCode::unavailable, std::to_string(left) + " Pods of run " + run_ +
                                            " are still terminating in namespace " + namespace_);
}

Status PodLauncher::prepare_service(const LaunchRequest& request, LaunchHandle h, Attempt& a) {
  const ServiceSpec& svc = *request.service;
  if (std::string why = stdout_probe_problem(svc); !why.empty()) return invalid_argument(why);
  a.service = true;
  a.readiness.detail = "its Pod " + a.pod + " is being created";
  std::string name = service_object_name(name_stem_, svc.name);
  if (!service_objects_.insert(name).second) return {};
  auto body = std::make_shared<std::string>(
      service_manifest(svc, run_, token_, name, options_.owner).dump());
  std::string path = "/api/v1/namespaces/" + namespace_ + "/services";
  std::string pod_path = "/api/v1/namespaces/" + namespace_ + "/pods/" + a.pod;
  // Queued before the replica's Pod create, so it runs first on the worker.
  post([this, h, body, path, pod_path, name](KubeClient& c) {
    auto r = c.raw("POST", path, *body);
    Status s;
    if (!r)
      s = r.status();
    else if (r->code != 409 && (r->code < 200 || r->code >= 300))  // 409: a resumed run's
      s = http_error(*r, "create services in namespace " + namespace_, c.config());
    if (s.ok() && r->code == 409) take_ownership(c, "services", name);
    if (s.ok()) return;
    StateUpdate u;
    u.kind = UpdateKind::exited;
    u.exit_code = 127;
    u.message = "its Service object " + name + ": " + s.message();
    std::lock_guard lock(mu_);
    done_.push_back({h, std::move(u), {}});
    // The Pod's create is already queued behind this job: delete it right after.
    jobs_.push_back([pod_path](KubeClient& k) {
      (void)k.raw("DELETE", pod_path,
                  R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
    });
    wake();
  });
  return {};
}

void PodLauncher::track_readiness(Attempt& a, const nlohmann::json& pod) {
  PodReadiness r = pod_readiness(pod);
  a.readiness.address = std::move(r.address);
  a.readiness.ready = r.ready;
  a.readiness.detail = std::move(r.detail);
}

std::optional<ReplicaReadiness> PodLauncher::readiness(LaunchHandle handle) const {
  auto it = attempts_.find(handle);
  if (it == attempts_.end() || !it->second.service) return std::nullopt;
  return it->second.readiness;
}

Status PodLauncher::delete_services(KubeClient& c) {
  if (service_objects_.empty()) return {};
  return delete_run_services(c, namespace_, selector_);
}

}  // namespace chorus::kube
