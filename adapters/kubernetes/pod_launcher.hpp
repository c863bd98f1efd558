// PodLauncher: every task attempt a Pod (pod_spec.hpp), created through the API; status from ONE
// watch of the run's Pods (pod_watch.hpp); the Pod's log fetched into the task's stdout file
// while it runs (log_follower.hpp). Requests per task: the create and the log fetch at the end,
// plus the log stream for a task that runs longer than kFollowAfter; the run's Pods are deleted
// by ONE collection DELETE at shutdown().
//
// Contract (beyond Launcher's):
// - Requests never run on the coordinator's thread: creates, deletes and log fetches go to a
//   worker thread with its own connection; launch() only queues (flush() wakes the worker).
//   A create the server refuses (403, a bad spec) ends that attempt with the server's words.
// - The run (the chorus.run label) is CHORUS_RUN_ID from the first launch's environment, its
//   Pods are those labelled chorus.token=CHORUS_RUN_TOKEN (run ids repeat across state folders;
//   tokens do not, so another run's Pods are never watched, adopted or deleted); the watch
//   starts then.
// - Resume: before its first create the worker lists the run's Pods once. A launch whose task
//   left a Pod that is adoptable() (the attempt before, still running or succeeded) follows
//   that Pod instead of creating one; the update comes from it like from a Pod of this session.
//   With an owner (a resumed `chorus submit --kubernetes`), an adopted Pod and a Service left
//   by the earlier session are patched to name it (one PATCH each), so deleting the earlier
//   coordinator's Pod no longer garbage-collects them; a refused patch is said by
//   ownership_problem(), the adoption stands.
// - cancel() and a timeout delete the Pod with the task's kill grace (default 5 s) and report
//   at once; the Pod's deletion finishes in Kubernetes.
// - When the API server stops answering for `give_up`, every attempt in flight is lost with
//   that reason; retries then fail at create, bounded by the client's retries.
// - stdout and stderr are one stream in Kubernetes: both go to the stdout file.
// - Services: a replica's Pod carries its readiness probe as a readinessProbe (pod_spec.hpp);
//   readiness() reports its Pod IP and Ready condition from the watch, so the coordinator never
//   probes it itself. The first replica launched of each service creates its headless Service
//   object (service_object.hpp) first; a create the server refuses fails that attempt with the
//   server's words and deletes its Pod. shutdown() deletes the run's Services too.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "adapters/kubernetes/kube_client.hpp"
#include "adapters/kubernetes/log_follower.hpp"
#include "adapters/kubernetes/pod_spec.hpp"
#include "adapters/kubernetes/pod_watch.hpp"
#include "adapters/kubernetes/service_object.hpp"
#include "adapters/launcher.hpp"

namespace chorus::kube {

struct PodLauncherOptions {
  KubeConfig config;
  std::string namespace_name;  // empty = the config's
  std::string default_image;   // for tasks without image: (the loader refuses them; code may not)
  std::chrono::seconds give_up{60};
  Duration kill_grace = std::chrono::seconds(5);
  // The coordinator's own Pod when it runs in one (`chorus submit --kubernetes`): the owner of
  // every Pod and Service this launcher creates, so they go when it goes (pod_spec.hpp).
  OwnerPod owner;
  // The claim holding the run's working directory, mounted in every task Pod (pod_spec.hpp).
  WorkdirClaim workdir_claim;
};

// How long a container runs before its log is streamed: a shorter task's log is only fetched at
// its end (one request instead of two), a longer one's shows in `chorus logs` while it runs.
// 3 s, not 1: under load the watch saw 18 of 200 `true` containers "running" for over a second
// (bench/README.md, Kubernetes), each then costing a stream.
inline constexpr Duration kFollowAfter = std::chrono::seconds(3);
// A Pod the node's kubelet refused for a resource Chorus booked as free (pod_spec.hpp,
// kubelet_refused: Chorus counts only its own Pods, and other workloads' Pods come and go) is
// made again under a new name, after 0.25 s, 0.5 s, ... 4 s, up to this many times (about 20 s in
// all); then the attempt fails with the kubelet's reason. The coordinator sees one attempt
// running on its node throughout.
inline constexpr int kMaxReadmits = 8;

class PodLauncher final : public Launcher {
 public:
  explicit PodLauncher(PodLauncherOptions options);
  ~PodLauncher() override;

  std::string_view name() const override { return "kubernetes"; }
  Result<LaunchHandle> launch(const LaunchRequest& request) override;
  void flush() override;
  void poll(std::vector<StateUpdate>& out) override;
  Status cancel(LaunchHandle handle) override;
  int wait_fd() const override;
  std::optional<TimePoint> next_deadline() const override;
  std::size_t in_flight() const override { return attempts_.size(); }
  std::optional<ReplicaReadiness> readiness(LaunchHandle handle) const override;

  // Deletes every Pod of the run (one request) and waits, bounded by `wait`, until they are
  // gone; says what is left otherwise. Idempotent.
  Status shutdown(std::chrono::seconds wait = std::chrono::seconds(10));
  // HTTP requests sent so far (worker + watch), for the benchmark.
  std::uint64_t requests() const;
  // Of those, the watch's (its LISTs and WATCH streams) and the log streams' (and fetches).
  std::uint64_t watch_requests() const { return watch_ ? watch_->requests() : 0; }
  std::uint64_t log_requests() const { return logs_ ? logs_->requests() : 0; }
  const std::string& run_label() const { return run_; }
  // Empty, or which adopted objects still name the earlier coordinator's Pod as their owner,
  // and why (thread-safe; KubernetesBackend reports it at stop()).
  std::string ownership_problem() const;
  const std::string& token_label() const { return token_; }

 private:
  struct Attempt {
    TaskId task = kNoTask;
    std::uint32_t attempt = 0;
    std::string pod;
    std::string stdout_path;
    std::optional<TimePoint> deadline;
    Duration grace{0};
    bool ending = false;  // final state seen, log being fetched
    // The log followed live (log_follower.hpp) from kFollowAfter after the container started;
    // the final update waits for the stream's end and a fetch of the whole log (report()).
    std::optional<TimePoint> follow_at;
    int follows = 0;  // streams started (one, again after a drop while it runs)
    bool following = false;
    std::optional<PodOutcome> outcome;  // seen before the stream ended
    bool service = false;               // a service replica: `readiness` follows its Pod
    ReplicaReadiness readiness;
    std::shared_ptr<const std::string> manifest;  // as created (kept to make it again)
    int readmits = 0;                             // Pods made again after a kubelet refusal
    std::optional<TimePoint> readmit_at;          // when the next one is created
  };
  struct Done {
    LaunchHandle handle = 0;
    StateUpdate update;
    std::string adopted;  // set: not an update; the attempt follows this Pod from now on
  };
  struct Adoption {  // what the worker needs to find a Pod left by an earlier session
    const TaskSpec* spec = nullptr;
    std::uint32_t attempt = 0;
  };
  void post(std::function<void(KubeClient&)> job);
  // Any thread: hands a result to poll() and wakes the coordinator through wait_fd().
  void deliver(Done d);
  void wake();
  void worker();
  void finish(LaunchHandle h, UpdateKind kind, int code, std::string message,
              std::vector<StateUpdate>& out);
  void delete_pod(const std::string& pod, Duration grace);
  void on_pod(LaunchHandle h, const std::string& type, const nlohmann::json& pod,
              std::vector<StateUpdate>& out);
  void adopt(LaunchHandle h, const std::string& pod, std::vector<StateUpdate>& out);
  void on_log_ended(const EndedLog& e);
  // Worker thread: creates Pod `pod`; a failed create is the attempt's end (delivered).
  void create_now(KubeClient& c, LaunchHandle h, const std::string& pod,
                  const std::string& manifest);
  // The same, queued for the worker.
  void post_create(LaunchHandle h, const std::string& pod,
                   std::shared_ptr<const std::string> manifest);
  // The kubelet refused the attempt's Pod: it is deleted and made again later (kMaxReadmits).
  void readmit(LaunchHandle h, Attempt& a);
  // The final update, after fetching the whole log.
  void report(LaunchHandle h, const PodOutcome& o);
  // Worker thread: the run's Pods from an earlier session, listed once before the first create.
  void list_previous(KubeClient& c);
  std::string take_adoptable(const Adoption& a);
  Status create_conflict(KubeClient& c, const std::string& pod);
  // On the worker: points `collection`/`name`'s ownerReferences at options_.owner (no-op
  // without one); a refusal is added to ownership_problem().
  void take_ownership(KubeClient& c, const std::string& collection, const std::string& name);
  // Services (launch, on_pod and shutdown call these).
  Status prepare_service(const LaunchRequest& request, LaunchHandle h, Attempt& a);
  static void track_readiness(Attempt& a, const nlohmann::json& pod);
  Status delete_services(KubeClient& c);

  PodLauncherOptions options_;
  std::string namespace_;
  std::string run_;        // the chorus.run label
  std::string token_;      // the chorus.token label ("" for a caller that gives none)
  std::string selector_;   // the run's Pods, URL-encoded: by token when there is one
  std::string name_stem_;  // what Pod and Service names start with: run id + token head
  std::unique_ptr<PodWatch> watch_;
  std::unique_ptr<LogFollower> logs_;
  std::unordered_map<LaunchHandle, Attempt> attempts_;
  std::unordered_map<std::string, LaunchHandle> by_pod_;
  // The latest state of Pods of the run no attempt follows (yet): an earlier session's, until
  // adopted or deleted. At most the run's Pods.
  std::unordered_map<std::string, nlohmann::json> unclaimed_;
  // Worker thread only.
  bool listed_ = false;
  std::unordered_map<std::string, std::vector<nlohmann::json>> previous_;  // by task name
  LaunchHandle next_ = 1;
  std::set<std::string> service_objects_;  // Service objects created (or being) by this launcher
  std::string ownership_problem_;          // guarded by mu_

  // The worker: jobs in, results (Done) out through done_ and the watch's wake-up fd.
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void(KubeClient&)>> jobs_, staged_;
  std::vector<Done> done_;
  std::vector<StateUpdate> cancelled_;
  bool shut_down_ = false;
  bool stopping_ = false;
  std::atomic<std::uint64_t> worker_requests_{0};
  int wake_fd_ = -1;
};

}  // namespace chorus::kube
