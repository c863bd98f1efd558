// chorus cancel RUN: stop a run. A live coordinator gets SIGTERM (it cancels its tasks, journals
// it and exits); a run whose coordinator is gone is marked cancelled in the journal, and what its
// tasks left running is stopped: on this host (runtime/orphans.hpp: verified process groups and
// the run's token, never another run's processes), or with --backend kubernetes its Pods. "Live" is
// verified (coordinator_alive: same boot, pid and start time), so a process that reused a dead
// coordinator's pid is never signalled.
#include <signal.h>

#include <chrono>
#include <thread>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "core/host_name.hpp"
#include "runtime/backends/kubernetes_backend.hpp"
#include "runtime/orphans.hpp"

namespace chorus::cli {
namespace {

// Until the served run `id` is no longer running, asking the server every 100 ms.
void wait_for_served_run(const Output& out, const std::string& server, const std::string& id,
                         Duration wait, const std::string& wait_text) {
  const auto give_up = std::chrono::steady_clock::now() + wait;
  const nlohmann::json ask{{"op", "status"}, {"run", id}, {"mode", "json"}};
  while (std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto reply = ask_server(server, ask);
    if (!reply.ok()) {
      out.error(reply.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    auto now = parse_run_status(reply->value("run_status", ""));
    if (now && *now != RunStatus::running) {
      out.run_ended(id, *now);
      return;
    }
  }
  out.error(id + " did not stop within " + wait_text);
  throw CLI::RuntimeError(kExitError);
}

struct CancelArgs {
  std::string run;
  std::string state_dir;
  std::string wait = "60s";
  std::string server;
  std::string backend = "local";
  std::string kubeconfig, context, namespace_name;
};

// A run whose coordinator is gone: what its tasks left running is stopped, as a resume would
// (a coordinator killed outright leaves them): on Kubernetes its Pods are deleted (5 s to stop,
// the default kill grace); else its processes on this host (runtime/orphans.hpp: never another
// run's). Says what.
Result<std::string> stop_what_was_left(StateStore& store, const RunInfo& run, const CancelArgs& a) {
  if (a.backend == "kubernetes") {
    KubernetesBackendOptions ko;
    ko.kubeconfig = a.kubeconfig;
    ko.context = a.context;
    ko.namespace_name = a.namespace_name;
    auto pods = delete_kubernetes_run(ko, run.token);
    if (!pods.ok()) return Status(pods.status().code(), "its Pods: " + pods.status().message());
    return *pods == 0
               ? std::string("no Pod of it was left")
               : "deleted " + std::to_string(*pods) + " Pod" + (*pods == 1 ? "" : "s") + " of it";
  }
  if (!run.host.empty() && run.host != host_name())
    return "what it left on " + run.host + ", if anything, cannot be stopped from here";
  auto previous = store.replay(run.id);
  auto groups = store.task_groups(run.id);
  int stopped = 0;
  if (previous.ok() && groups.ok()) stopped = kill_orphans_of_run(run, *groups, *previous);
  (void)store.forget_task_groups(run.id);
  if (stopped == 0) return std::string();
  return "stopped " + std::to_string(stopped) + " process" + (stopped == 1 ? "" : "es") +
         " it had left running";
}

void add_cancel_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("cancel", "Cancel a run (its running tasks are stopped)");
  using Args = CancelArgs;
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id (or 'latest')")->required();
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_option("--wait", a->wait, "How long to wait for the run to stop")->default_str("60s");
  cmd->add_option("--server", a->server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->add_option("--backend", a->backend,
                  "Where the run's tasks ran, for a run whose coordinator is gone: local (this "
                  "host's processes, the default) or kubernetes (its Pods are deleted)")
      ->check(CLI::IsMember({"local", "kubernetes"}));
  cmd->add_option("--kubeconfig", a->kubeconfig, "With --backend kubernetes: the kubeconfig");
  cmd->add_option("--context", a->context, "With --backend kubernetes: the kubeconfig context");
  cmd->add_option("--namespace", a->namespace_name,
                  "With --backend kubernetes: the run's namespace (default: the context's)");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    auto wait = parse_duration(a->wait);
    if (!wait.ok()) {
      out.error("--wait: " + wait.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    if (auto server = chosen_server(a->server, a->state_dir)) {
      nlohmann::json reply = call_server(*server, {{"op", "cancel"}, {"run", a->run}}, false);
      if (!reply.contains("run")) return;  // it had ended already
      wait_for_served_run(out, *server, reply["run"], *wait, a->wait);
      return;
    }
    auto [store, run_info] = open_run_or_exit(a->state_dir, a->run);
    const RunInfo* run = &run_info;
    if (run->status != RunStatus::running) {
      out.run_already_ended(run->id, run->status);
      return;
    }
    Status signalled = signal_coordinator(*run, SIGTERM);
    if (signalled.code() == ErrorCode::not_found) {
      // Stopped before the run is marked: when that fails (the cluster out of reach), the run
      // stays as it was and the same command can be given again.
      auto done = stop_what_was_left(*store, *run, *a);
      if (!done.ok()) {
        out.error(done.status().message());
        throw CLI::RuntimeError(kExitError);
      }
      RunInfo info = *run;
      info.status = RunStatus::cancelled;
      info.updated = wall_seconds_now();
      info.coordinator_pid = 0;
      info.coordinator_start = 0;
      if (Status s = store->update_run(info); !s.ok()) {
        out.error(s.message());
        throw CLI::RuntimeError(kExitError);
      }
      out.run_marked_cancelled(run->id, *done);
      return;
    }
    if (!signalled.ok()) {
      out.error(signalled.message());
      throw CLI::RuntimeError(kExitError);
    }
    out.run_cancelling(run->id, run->coordinator_pid);
    auto give_up = std::chrono::steady_clock::now() + *wait;
    while (std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto now = store->find_run(run->id);
      if (now.ok() && now->status != RunStatus::running) {
        out.run_ended(run->id, now->status);
        return;
      }
    }
    out.error(run->id + " did not stop within " + a->wait);
    throw CLI::RuntimeError(kExitError);
  });
}

const CommandRegistrar registrar{"cancel", add_cancel_command};

}  // namespace
}  // namespace chorus::cli
