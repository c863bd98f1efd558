#include "runtime/backends/kubernetes_backend.hpp"

#include <cstdio>
#include <cstdlib>

#include "adapters/inproc/inproc_launcher.hpp"
#include "adapters/kubernetes/kube_cluster.hpp"
#include "adapters/kubernetes/pod_launcher.hpp"
#include "adapters/kubernetes/run_objects.hpp"
#include "runtime/backends/local_backend.hpp"

namespace chorus {
namespace {

class KubernetesBackend final : public ExecutionBackend {
 public:
  explicit KubernetesBackend(KubernetesBackendOptions o)
      : options_(std::move(o)), functions_(function_pool_threads(options_.function_threads)) {}
  ~KubernetesBackend() override { stop(); }

  std::string_view name() const override { return "kubernetes"; }

  Status start(const BackendStart&) override {
    if (pods_) return {};
    auto opened =
        kube::open_cluster(options_.kubeconfig, options_.context, options_.namespace_name);
    if (!opened) return opened.status();
    start_requests_ = opened->requests;
    nodes_ = std::move(opened->nodes);
    kube::PodLauncherOptions po;
    po.config = std::move(opened->config);
    po.namespace_name = std::move(opened->namespace_name);
    po.kill_grace = options_.kill_grace;
    po.give_up = options_.api_give_up;
    po.owner = {options_.owner_pod, options_.owner_pod_uid};
    po.workdir_claim = {options_.workdir_claim, options_.workdir_claim_path};
    pods_ = std::make_unique<kube::PodLauncher>(std::move(po));
    return {};
  }

  void stop() override {
    if (!pods_ || stopped_) return;
    stopped_ = true;
    if (Status s = pods_->shutdown(std::chrono::seconds(10)); !s.ok())
      stop_problem_ = "the run's Pods may be left in the cluster: " + s.message() +
                      "; `chorus run --resume` adopts them, or delete them with: kubectl delete "
                      "pods -l chorus.token=" +
                      pods_->token_label();
    if (std::string owners = pods_->ownership_problem(); !owners.empty())
      stop_problem_ += (stop_problem_.empty() ? "" : "; ") + owners;
    // The benchmark's count of our own requests (bench/k8s/run.py): the API server's metrics
    // cannot tell our requests from the kubelets'.
    if (const char* stats = std::getenv("CHORUS_K8S_STATS"); stats != nullptr && *stats != '\0') {
      if (std::FILE* f = std::fopen(stats, "w")) {
        // start: discovery, namespace, nodes; watch: its LISTs and WATCHes; logs: the follow
        // streams and fetches; worker: creates, deletes, the adoption LIST, shutdown's DELETE
        // and waits.
        auto u = [](std::uint64_t n) { return static_cast<unsigned long long>(n); };
        std::uint64_t watch = pods_->watch_requests(), logs = pods_->log_requests();
        std::uint64_t all = pods_->requests();
        std::fprintf(f,
                     "{\"requests\": %llu, \"start\": %llu, \"watch\": %llu, \"logs\": %llu, "
                     "\"worker\": %llu}\n",
                     u(start_requests_ + all), u(start_requests_), u(watch), u(logs),
                     u(all - watch - logs));
        std::fclose(f);
      }
    }
  }

  LauncherTable launchers() override {
    // MPI tasks run their ranks inside one Pod (the loader refuses ranks across Pods).
    return launcher_table(*pods_, functions_, *pods_);
  }
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  // --resume: PodLauncher adopts the run's Pods still running (or finished meanwhile).
  bool adopts_running_work() const override { return true; }
  std::string stop_problem() const override { return stop_problem_; }
  std::unique_ptr<PlacementPolicy> wrap_placement(
      std::unique_ptr<PlacementPolicy> policy) const override {
    return policy;
  }

 private:
  KubernetesBackendOptions options_;
  InprocLauncher functions_;
  std::unique_ptr<kube::PodLauncher> pods_;
  std::vector<NodeInfo> nodes_;
  bool stopped_ = false;
  std::string stop_problem_;
  std::uint64_t start_requests_ = 0;  // discovery, namespace, nodes
};

}  // namespace

Result<std::size_t> delete_kubernetes_run(const KubernetesBackendOptions& options,
                                          const std::string& token) {
  if (token.empty()) return invalid_argument("the run has no token (journaled by an older build)");
  auto config = kube::resolve_kube_config(options.kubeconfig, options.context);
  if (!config) return config.status();
  const std::string ns =
      options.namespace_name.empty() ? config->namespace_name : options.namespace_name;
  kube::KubeClient client(*config);
  const std::string selector = kube::token_selector(token);
  auto pods = kube::delete_run_pods(client, ns, selector, options.kill_grace);
  if (!pods) return pods.status();
  if (Status s = kube::delete_run_services(client, ns, selector); !s.ok()) return s;
  return *pods;
}

std::unique_ptr<ExecutionBackend> make_kubernetes_backend(KubernetesBackendOptions options) {
  return std::make_unique<KubernetesBackend>(std::move(options));
}

}  // namespace chorus
