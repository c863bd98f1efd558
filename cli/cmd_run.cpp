// chorus run FILE [--resume [RUN]]: run a workflow here, journaled, with progress and a summary.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/live_plan.hpp"
#include "cli/output/output.hpp"
#include "cli/run_common.hpp"
#include "cli/workflow_input.hpp"
#include "core/node_info.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/backends/kubernetes_backend.hpp"

namespace chorus::cli {
namespace {

struct RunArgs : CommonRunArgs {
  std::string queue;  // empty = the workflow's choice, else fifo
  bool oversubscribe = false;
  int cores = 0;            // > 0: the cores this machine offers to tasks, instead of its own count
  double replay_scale = 0;  // > 0: replace each command by a sleep of estimate x scale
  std::string backend;      // "local" (default) or "kubernetes"
  std::string kubeconfig, context, namespace_name;
  std::string api_give_up = "60s";
  std::string workdir_claim;  // --workdir-claim: the cwd is this PVC in every task Pod
};

// --backend kubernetes: the cluster is asked for its nodes before the workflow is judged, so a
// task no node can hold is refused at its file:line:col before anything starts.
Result<std::unique_ptr<ExecutionBackend>> start_kubernetes(const RunArgs& a, Duration grace) {
  KubernetesBackendOptions ko;
  ko.kubeconfig = a.kubeconfig;
  ko.context = a.context;
  ko.namespace_name = a.namespace_name;
  ko.kill_grace = grace;
  // Set by `chorus submit --kubernetes` in the coordinator's Pod (coordinator_pod.hpp).
  if (const char* pod = std::getenv("CHORUS_OWNER_POD")) ko.owner_pod = pod;
  if (const char* uid = std::getenv("CHORUS_OWNER_POD_UID")) ko.owner_pod_uid = uid;
  if (!a.workdir_claim.empty()) {
    std::error_code ec;
    ko.workdir_claim = a.workdir_claim;
    ko.workdir_claim_path = std::filesystem::current_path(ec).lexically_normal().string();
  }
  auto give_up = parse_duration(a.api_give_up);
  if (!give_up.ok() || *give_up < std::chrono::seconds(1))
    return invalid_argument("--api-give-up: " + (give_up.ok() ? std::string("must be at least 1s")
                                                              : give_up.status().message()));
  ko.api_give_up = std::chrono::duration_cast<std::chrono::seconds>(*give_up);
  auto backend = make_kubernetes_backend(std::move(ko));
  CancelToken cancel;
  if (Status s = backend->start({&cancel, resolve_state_dir(a.state_dir)}); !s.ok()) return s;
  return backend;
}

// --replay-scale: run a recorded trace's shape without its programs. Every task sleeps its
// `estimate` times the scale. A task without an estimate is an error (nothing to replay).
Status apply_replay_scale(WorkflowGraph& graph, double scale) {
  for (auto& t : graph.tasks) {
    if (t.estimate <= Duration::zero()) {
      return invalid_argument("task '" + t.name +
                              "' has no estimate: --replay-scale needs one on every task");
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.6f",
                  std::chrono::duration<double>(t.estimate).count() * scale);
    t.cmd.argv = {"sleep", seconds};
    t.cmd.shell.clear();
  }
  return {};
}

int run_command(RunArgs a) {
  auto grace = prepare_run(a, "chorus run");
  if (!grace) return kExitBadInput;
  NodeInfo machine = local_node_info();
  if (a.cores > 0) machine.capacity.cores = a.cores;
  std::unique_ptr<ExecutionBackend> backend;
  const bool kubernetes = a.backend == "kubernetes";
  if (!kubernetes && !a.workdir_claim.empty()) {
    print_error("--workdir-claim is for --backend kubernetes");
    return kExitBadInput;
  }
  if (kubernetes) {
    if (a.agents > 0 || a.cores > 0) {
      print_error(
          "--backend kubernetes takes its nodes from the cluster: drop --agents and --cores");
      return kExitBadInput;
    }
    auto started = start_kubernetes(a, *grace);
    if (!started) {
      print_error(started.status().message());
      return started.status().code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError;
    }
    backend = std::move(*started);
  }
  auto graph = [&] {
    if (kubernetes) return load_workflow_for_containers(a.file, backend->nodes(), a.queue);
    return a.cores > 0 && !a.oversubscribe
               ? load_workflow_for_cli(a.file, machine.capacity, "this run (--cores)", a.queue)
               : load_workflow_for_cli(a.file, a.oversubscribe, a.queue);
  }();
  if (!graph.ok()) {
    print_error(graph.status().message());
    return kExitBadInput;
  }
  if (a.replay_scale > 0) {
    if (Status s = apply_replay_scale(*graph, a.replay_scale); !s.ok()) {
      print_error(s.message());
      return kExitBadInput;
    }
  }
  RunOptions options;
  options.queue = a.queue;
  if (!a.queue.empty()) options.queue_at = {"--queue"};
  options.oversubscribe = a.oversubscribe;
  if (a.cores > 0 && a.agents == 0) options.nodes = {machine};  // agents report their own
  std::unique_ptr<LivePlanSetup> plan;  // `scheduler: {planner: ...}`; outlives the run
  if (!graph->scheduler.planner.empty()) {
    auto setup = a.agents > 0 ? Result<std::unique_ptr<LivePlanSetup>>(invalid_argument(
                                    "planner " + graph->scheduler.planner +
                                    " with --agents is not supported yet (the plan needs the "
                                    "nodes before the agents register)"))
                              : setup_live_plan(*graph, {machine}, a.json, options);
    if (!setup.ok()) {
      print_error(setup.status().message());
      return kExitBadInput;
    }
    plan = std::move(*setup);
  }
  // Where the tasks run: a Kubernetes cluster (started above), agents started by hand, else this
  // machine (--cores: options.nodes).
  if (a.agents > 0) {
    auto times = parse_agent_times(a);
    if (!times) return kExitBadInput;
    AgentsBackendOptions ao;
    ao.count = static_cast<std::size_t>(a.agents);
    if (!a.listen.empty()) ao.listen = a.listen;
    ao.agent_timeout = times->timeout;
    ao.agent_wait = times->wait;
    ao.kill_grace = *grace;
    ao.on_listening = [](const AgentInvitation& i) {
      std::fprintf(stderr,
                   "waiting for %zu agent%s; start each with:\n  chorus agent --connect %s --keys "
                   "%s\n",
                   i.count, i.count == 1 ? "" : "s", i.endpoint.c_str(), i.key_dir.c_str());
    };
    ao.on_all_lost = report_all_agents_lost;
    backend = make_agents_backend(std::move(ao));
  }
  return run_and_report(a, *grace, *graph, std::move(options), "chorus run", backend.get());
}

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a workflow on this machine (no server needed)");
  auto a = std::make_shared<RunArgs>();
  add_common_run_options(cmd, a);
  cmd->add_option("--queue", a->queue,
                  "Queue policy, overriding the workflow's scheduler section (default: fifo)");
  cmd->add_flag("--oversubscribe", a->oversubscribe,
                "Start tasks even when their cores exceed this machine's free cores");
  cmd->add_option("--cores", a->cores,
                  "Cores of this machine the scheduler hands out (default: all of them); more "
                  "than it has shares them, e.g. with services that mostly wait")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--backend", a->backend,
                  "Where tasks run: local (this machine, the default) or kubernetes (one Pod per "
                  "task on the node placement chose)")
      ->check(CLI::IsMember({"local", "kubernetes"}));
  cmd->add_option("--kubeconfig", a->kubeconfig,
                  "With --backend kubernetes: the kubeconfig (default: in-cluster, $KUBECONFIG, "
                  "~/.kube/config)");
  cmd->add_option("--context", a->context, "With --backend kubernetes: the kubeconfig context");
  cmd->add_option("--namespace", a->namespace_name,
                  "With --backend kubernetes: the namespace of the Pods (default: the context's)");
  cmd->add_option("--workdir-claim", a->workdir_claim,
                  "With --backend kubernetes: the current directory is this "
                  "PersistentVolumeClaim, mounted here (chorus submit --kubernetes "
                  "--volume-claim runs the coordinator so); every task Pod mounts it at the same "
                  "path instead of a hostPath");
  cmd->add_option("--api-give-up", a->api_give_up,
                  "With --backend kubernetes: how long the API server may not answer before the "
                  "tasks in flight fail (the journal keeps what finished; --resume continues)")
      ->default_str("60s");
  cmd->add_option("--replay-scale", a->replay_scale,
                  "Replay mode: each task sleeps its recorded estimate times this factor "
                  "(for imported traces, e.g. 0.001)");
  cmd->callback([a, cmd] {
    note_resume(cmd, *a);
    if (cmd->count("--replay-scale") > 0 && !(a->replay_scale > 0)) {
      print_error("--replay-scale must be a positive number (e.g. 0.001), got " +
                  std::to_string(a->replay_scale));
      throw CLI::RuntimeError(kExitBadInput);
    }
    int code = run_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"run", add_run_command};

}  // namespace
}  // namespace chorus::cli
