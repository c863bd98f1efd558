// chorus submit --slurm [-N NODES] [-t TIME] [-p PARTITION] [--job-name NAME] FILE: submit a
// batch job that runs the workflow inside a Slurm allocation, through libslurm (no sbatch), and
// record the submission in <state>/submissions.json (a small file of its own: the SQLite journal
// belongs to runtime/store and holds runs, not batch jobs).
//
// chorus submit --kubernetes [--image I] [--service-account SA] [--workdir DIR] FILE: run the
// coordinator itself as a Pod (adapters/kubernetes/coordinator_pod.hpp), the workflow in a
// ConfigMap owned by it; print how to follow it. The Pod is the record (label chorus.submission).
//
// submissions.json: {"submissions": [{"job_id": 12, "workflow": "/abs/wf.yaml",
//   "submitted_at": "2026-11-30T08:45:12Z", "unix_time": 1795..., "nodes": 4, "partition": "debug",
//   "job_name": "wf", "output": "/abs/slurm-%j.out"}, ...]} — read by `chorus slurm-status`.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "adapters/kubernetes/coordinator_pod.hpp"
#include "adapters/kubernetes/coordinator_submit.hpp"
#include "adapters/kubernetes/kube_cluster.hpp"
#include "adapters/kubernetes/pod_spec.hpp"
#include "adapters/slurm/slurm_client.hpp"
#include "api/chorus.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/json_text.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "cli/workflow_input.hpp"
#include "core/self_executable.hpp"

namespace chorus::cli {
namespace {

struct SubmitArgs {
  std::string file;
  bool slurm = false;
  int nodes = 1;
  std::string time_limit;
  std::string partition;
  std::string job_name;
  std::string output;
  std::string state_dir;
  bool parsable = false;
  // To a served instance (chorus serve): --server, CHORUS_SERVER, or the state folder's socket.
  std::string server;
  std::string key;
  bool json = false;
  // --kubernetes
  bool kubernetes = false;
  std::string kubeconfig, context, namespace_name;
  std::string image, image_pull_policy;
  std::string service_account = "chorus";
  std::string workdir;
  std::string grace = "5s";
  int wait_start = 30;
  std::string volume_claim;  // --kubernetes --volume-claim NAME: the working directory's PVC
  std::string resume;  // --kubernetes --resume RUN: continue that run in a new coordinator Pod
  std::vector<std::string> slurm_only;  // Slurm options given, refused with --kubernetes
};

// 'text' for a POSIX shell, whatever it holds.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string iso_utc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Slurm's "%j" in an output path, for the record (the other % patterns stay as Slurm has them).
std::string expand_job_id(std::string path, std::uint32_t job_id) {
  for (std::size_t at = path.find("%j"); at != std::string::npos; at = path.find("%j", at)) {
    path.replace(at, 2, std::to_string(job_id));
  }
  return path;
}

// Appends one record under an exclusive lock, written to a temporary file then renamed, so a
// reader never sees half a file and two concurrent submits both land.
Status record_submission(const std::string& state_dir, const nlohmann::json& record) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return io_error("cannot create the state folder " + state_dir + ": " + ec.message());
  std::string path = state_dir + "/submissions.json";
  std::string lock_path = path + ".lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return io_error("cannot open " + lock_path + ": " + std::strerror(errno));
  ::flock(lock_fd, LOCK_EX);
  Status result;
  nlohmann::json doc = {{"submissions", nlohmann::json::array()}};
  if (std::ifstream in(path); in) {
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = nlohmann::json::parse(text.str(), nullptr, false);
    if (parsed.is_discarded() || !parsed.contains("submissions") ||
        !parsed["submissions"].is_array()) {
      result =
          invalid_argument(path + " is not a submissions file written by chorus; move it away");
    } else {
      doc = std::move(parsed);
    }
  }
  if (result.ok()) {
    doc["submissions"].push_back(record);
    std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << json_text(doc, 2) << '\n';
      if (!out) result = io_error("cannot write " + tmp + ": " + std::strerror(errno));
    }
    if (result.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
      result = io_error("cannot replace " + path + ": " + std::strerror(errno));
    }
  }
  ::flock(lock_fd, LOCK_UN);
  ::close(lock_fd);
  return result;
}

int submit_kubernetes(const SubmitArgs& a);

// The file's text goes to the instance, which checks it (file:line:col errors come back) and
// answers with the run id at once. The key makes a retry after a lost reply safe.
int submit_to_server(const SubmitArgs& a, const std::string& server) {
  const Output out = Output::for_command(a.json);
  std::ifstream in(a.file, std::ios::binary);
  if (!in) {
    out.error("cannot read " + a.file + ": " + std::strerror(errno));
    return kExitBadInput;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::error_code ec;
  nlohmann::json request{
      {"op", "submit"},
      {"path", std::filesystem::absolute(a.file, ec).lexically_normal().string()},
      {"text", text.str()},
      {"cwd", std::filesystem::current_path(ec).string()},
      {"key", a.key.empty() ? new_run_token() : a.key}};
  call_server(server, std::move(request), a.json);
  return kExitOk;
}

int submit_command(const SubmitArgs& a) {
  const Output out = Output::for_command(false);
  if (a.slurm && a.kubernetes) {
    out.error("submit takes one target: --slurm or --kubernetes");
    return kExitBadInput;
  }
  if (a.kubernetes) return submit_kubernetes(a);
  if (!a.resume.empty()) {
    out.error(
        "--resume is for --kubernetes (a run whose coordinator Pod died); chorus run --resume "
        "continues a run on this machine");
    return kExitBadInput;
  }
  if (!a.volume_claim.empty()) {
    out.error("--volume-claim is for --kubernetes");
    return kExitBadInput;
  }
  if (!a.slurm) {
    if (auto server = chosen_server(a.server, a.state_dir)) return submit_to_server(a, *server);
    // Where it looked, so a user whose instance runs with --state DIR sees why it was not found.
    out.error(
        "submit needs a target: a served instance (--server SOCKET, CHORUS_SERVER, "
        "or a chorus serve's socket in the state folder: none at " +
        resolve_state_dir(a.state_dir) + "/serve.sock; --state DIR for another), --slurm " +
        "or --kubernetes");
    return kExitBadInput;
  }
  if (a.nodes < 1) {
    out.error("-N/--nodes must be at least 1, got " + std::to_string(a.nodes));
    return kExitBadInput;
  }
  // Check the workflow here, not minutes later on a compute node. The login node is not where
  // it runs, so its size does not limit the tasks (oversubscribe).
  auto graph = load_workflow_for_cli(a.file, /*oversubscribe=*/true);
  if (!graph.ok()) {
    out.error(graph.status().message());
    return kExitBadInput;
  }
  BatchJobRequest request;
  request.nodes = a.nodes;
  if (!a.time_limit.empty()) {
    auto minutes = parse_slurm_time_limit(a.time_limit);
    if (!minutes.ok()) {
      out.error("-t/--time: " + minutes.status().message());
      return kExitBadInput;
    }
    request.time_limit_minutes = *minutes;
  }
  std::error_code ec;
  std::string work_dir = std::filesystem::current_path(ec).string();
  std::string workflow = std::filesystem::absolute(a.file, ec).lexically_normal().string();
  std::string state_dir = resolve_state_dir(a.state_dir);
  request.partition = a.partition;
  request.job_name = a.job_name.empty() ? graph->name : a.job_name;
  request.work_dir = work_dir;
  if (!a.output.empty()) {
    request.stdout_path = std::filesystem::absolute(a.output, ec).lexically_normal().string();
  } else {
    request.stdout_path = work_dir + "/slurm-%j.out";
  }
  // The batch script runs `chorus launch`, which spreads the workflow over every node of the
  // allocation. Whole nodes are asked for: the tasks' cores are counted against them.
  request.exclusive = true;
  request.no_kill = true;  // a failed node costs its tasks (requeued by chorus launch), not the job
  request.script =
      "#!/bin/bash\n"
      "# Written by chorus submit: runs " +
      workflow +
      " across the allocation\n"
      "cd " +
      shell_quote(work_dir) +
      " || exit 1\n"
      "exec " +
      shell_quote(self_executable()) + " launch " + shell_quote(workflow) + " --state " +
      shell_quote(state_dir) + "\n";

  auto client = SlurmClient::open();
  if (!client.ok()) {
    out.error(client.status().message());
    return kExitError;
  }
  auto job = (*client)->submit_batch(request);
  if (!job.ok()) {
    out.error(job.status().message());
    return job.status().code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError;
  }

  std::time_t now = std::time(nullptr);
  nlohmann::json record = {{"job_id", *job},
                           {"workflow", workflow},
                           {"submitted_at", iso_utc(now)},
                           {"unix_time", static_cast<std::int64_t>(now)},
                           {"nodes", a.nodes},
                           {"partition", a.partition},
                           {"job_name", request.job_name},
                           {"output", expand_job_id(request.stdout_path, *job)}};
  Status recorded = record_submission(state_dir, record);
  out.submitted(*job, a.parsable);
  if (!recorded.ok()) {
    // The job runs anyway: say so, so the user does not submit it twice.
    out.error("job " + std::to_string(*job) +
              " was submitted but not recorded: " + recorded.message());
    return kExitError;
  }
  return kExitOk;
}

// Five characters as Kubernetes' generateName picks them (no vowels: no words by accident).
std::string random_suffix() {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device rd;
  std::uniform_int_distribution<std::size_t> pick(0, sizeof alphabet - 2);
  std::string s;
  for (int i = 0; i < 5; ++i) s.push_back(alphabet[pick(rd)]);
  return s;
}

int exit_for(const Status& s) {
  return s.code() == ErrorCode::invalid_argument || s.code() == ErrorCode::not_found ||
                 s.code() == ErrorCode::unsatisfiable
             ? kExitBadInput
             : kExitError;
}

// Where --volume-claim mounts the claim when --workdir does not say.
constexpr const char* kClaimMountDefault = "/work";

// --resume RUN of a submitted run: the run's id, checked against the journal when the submitter
// sees it (the hostPath state folder is often this machine's, or a shared file system; never
// with --volume-claim); else
// passed on as given, and the coordinator Pod checks it (a refusal is its log's last lines).
Result<std::string> resume_target(const SubmitArgs& a, const WorkflowGraph& graph,
                                  const std::string& state_dir, const Output& out) {
  std::error_code ec;
  // With a claim, state_dir is where the claim is mounted in the Pods: a folder of that name
  // here is not the journal.
  if (!a.volume_claim.empty() || !std::filesystem::exists(state_dir + "/chorus.db", ec)) {
    out.note("the journal " + state_dir +
             " is not visible here: the coordinator Pod checks that run " + a.resume +
             " is there and of workflow '" + graph.name + "'");
    return a.resume;
  }
  auto store = open_journal(state_dir);
  if (!store) return store.status();
  auto run = (*store)->find_run(a.resume);
  if (!run) {
    return invalid_argument("--resume " + a.resume + ": " + run.status().message() +
                            " (the journal " + state_dir + "; chorus list --state " + state_dir +
                            " shows its runs)");
  }
  if (run->workflow_name != graph.name) {
    return invalid_argument("--resume " + a.resume + ": run '" + run->id + "' is of workflow '" +
                            run->workflow_name + "', not '" + graph.name + "' (" + a.file + ")");
  }
  return run->id;
}

// The same checks `chorus run --backend kubernetes` makes before it starts (the cluster serves
// what the backend needs, the namespace exists, the workflow fits its nodes and names images),
// then the service account, then the ConfigMap and the Pod. Nothing is created unless every
// check passed.
int submit_kubernetes(const SubmitArgs& a) {
  const Output out = Output::for_command(false);
  if (!a.slurm_only.empty()) {
    std::string given;
    for (const auto& o : a.slurm_only) given += (given.empty() ? "" : ", ") + o;
    out.error(given + (a.slurm_only.size() == 1 ? " is" : " are") +
              " for --slurm: a Kubernetes coordinator takes its nodes from the cluster");
    return kExitBadInput;
  }
  std::int64_t deadline_seconds = 0;
  if (!a.time_limit.empty()) {
    auto minutes = parse_slurm_time_limit(a.time_limit);
    if (!minutes.ok()) {
      out.error("-t/--time: " + minutes.status().message());
      return kExitBadInput;
    }
    deadline_seconds = static_cast<std::int64_t>(*minutes) * 60;
  }
  auto grace = parse_duration(a.grace);
  if (!grace.ok()) {
    out.error("--grace: " + grace.status().message());
    return kExitBadInput;
  }
  auto opened = kube::open_cluster(a.kubeconfig, a.context, a.namespace_name);
  if (!opened) {
    out.error(opened.status().message());
    return exit_for(opened.status());
  }
  const kube::KubeConfig* config = &opened->config;
  const std::string& ns = opened->namespace_name;
  kube::KubeClient client(*config);
  auto graph = load_workflow_for_containers(a.file, opened->nodes);
  if (!graph.ok()) {
    out.error(graph.status().message());
    return kExitBadInput;
  }
  std::string text;
  {
    std::ifstream in(a.file, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    text = buf.str();
    if (!in && !in.eof()) {
      out.error("cannot read " + a.file + ": " + std::strerror(errno));
      return kExitError;
    }
  }
  // A ConfigMap holds at most 1 MiB (etcd's object limit), metadata included.
  if (text.size() > 1000 * 1000) {
    out.error(a.file + " is " + std::to_string(text.size()) +
              " bytes: a workflow submitted to Kubernetes travels in a ConfigMap, at most 1 MB");
    return kExitBadInput;
  }
  if (Status s = kube::check_service_account(client, ns, a.service_account); !s.ok()) {
    out.error(s.message());
    return exit_for(s);
  }
  if (Status s = kube::check_service_account_rights(client, ns, a.service_account); !s.ok()) {
    out.error(s.message());
    return exit_for(s);
  }

  std::error_code ec;
  kube::CoordinatorPod pod;
  pod.name =
      kube::coordinator_pod_name(a.job_name.empty() ? graph->name : a.job_name, random_suffix());
  pod.namespace_name = ns;
  pod.image = a.image.empty() ? std::string("localhost/chorus:") + version() : a.image;
  pod.image_pull_policy = a.image_pull_policy;
  pod.service_account = a.service_account;
  std::string file_name = std::filesystem::path(a.file).filename().string();
  pod.workflow_key = kube::workflow_key(file_name);
  pod.workflow_text = std::move(text);
  pod.workflow_source = std::filesystem::absolute(a.file, ec).lexically_normal().string();
  // With a claim the working directory is wherever it is mounted, /work unless told: the
  // submitter's own directory means nothing inside it.
  const std::string workdir = !a.workdir.empty()       ? a.workdir
                              : a.volume_claim.empty() ? "."
                                                       : kClaimMountDefault;
  pod.workdir = std::filesystem::absolute(workdir, ec).lexically_normal().string();
  while (pod.workdir.size() > 1 && pod.workdir.back() == '/') pod.workdir.pop_back();
  pod.state_dir = a.state_dir.empty() ? pod.workdir + "/.chorus" : resolve_state_dir(a.state_dir);
  if (!a.volume_claim.empty()) {
    if (!kube::path_within(pod.state_dir, pod.workdir)) {
      out.error("--state " + pod.state_dir + " is outside the working directory " + pod.workdir +
                ": with --volume-claim the journal lives on the claim, inside --workdir");
      return kExitBadInput;
    }
    std::vector<std::string> notes;
    if (Status s = kube::check_volume_claim(client, ns, a.volume_claim, notes); !s.ok()) {
      out.error(s.message());
      return exit_for(s);
    }
    for (const auto& n : notes) out.note(n);
    pod.volume_claim = a.volume_claim;
  }
  pod.api = kube::loopback_api_server(config->server);
  pod.deadline_seconds = deadline_seconds;
  pod.grace = a.grace;
  // The coordinator's Ctrl-C path: SIGTERM, its tasks' kill grace, then up to 10 s for its
  // collection DELETE of the task Pods (KubernetesBackend::stop), with room to spare.
  pod.termination_grace_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(*grace).count() + 30;
  if (!a.resume.empty()) {
    auto run = resume_target(a, *graph, pod.state_dir, out);
    if (!run) {
      out.error(run.status().message());
      return exit_for(run.status());
    }
    if (Status s = kube::check_no_live_coordinator(client, ns, pod.state_dir, *run); !s.ok()) {
      out.error(s.message());
      return exit_for(s);
    }
    pod.resume_run = *run;
  }

  if (pod.api) {
    // No kube-proxy is needed to reach a loopback API server, and none would help: the Service's
    // ClusterIP would forward to 127.0.0.1 inside the Pod's own network namespace.
    out.note("the API server " + config->server +
             " is on a loopback address: the coordinator Pod uses its node's network "
             "(hostNetwork) and reaches it at that address");
  }
  auto created = kube::create_coordinator(client, pod);
  if (!created) {
    out.error(created.status().message());
    return exit_for(created.status());
  }
  const std::string& name = created->name;
  kube::CoordinatorStart start;
  if (a.wait_start > 0) {
    auto started = kube::wait_for_start(client, ns, name, std::chrono::seconds(a.wait_start));
    if (!started) {
      out.error("coordinator Pod " + name + " was created, but: " + started.status().message());
      return kExitError;
    }
    start = *started;
  }
  using State = kube::CoordinatorStart::State;
  if (start.state == State::failed) {
    if (start.exit_code == 125) {
      // Never ran (its image or a volume): nothing to keep, no grace to give (its 35 s would
      // keep it listed), and the ConfigMap goes with it.
      (void)client.raw("DELETE",
                       "/api/v1/namespaces/" + ns + "/pods/" + name + "?gracePeriodSeconds=1");
      out.error("the coordinator Pod " + name + " cannot start: " + start.message +
                "; it was deleted. Pass --image with an image that has chorus in it "
                "(scripts/chorus-image.sh builds one; docs/kubernetes.md)");
      return kExitBadInput;
    }
    auto log =
        client.raw("GET", "/api/v1/namespaces/" + ns + "/pods/" + name + "/log?tailLines=20");
    out.error("the coordinator Pod " + name + " ended at once: " + start.message +
              (log && log->code == 200 && !log->body.empty() ? "; its log ends with:\n" + log->body
                                                             : std::string{}));
    return kExitError;
  }
  if (a.parsable) {
    std::printf("%s\n", name.c_str());
    std::fflush(stdout);
    return kExitOk;
  }
  std::string how = start.state == State::running     ? "running on node " + start.node
                    : start.state == State::succeeded ? "already finished"
                    : a.wait_start > 0
                        ? "still " + start.message + " after " + std::to_string(a.wait_start) + " s"
                        : "not waited for";
  std::printf(
      "Submitted coordinator Pod %s in namespace %s (%s; image %s, service account %s)\n"
      "  workflow: %s (ConfigMap %s, deleted with the Pod)\n"
      "  working directory: %s, journal: %s (%s)\n"
      "Follow it:\n"
      "  kubectl -n %s logs -f %s\n"
      "  chorus status --state %s     (where the nodes' %s is visible)\n"
      "  chorus list --state %s\n"
      "Stop it: kubectl -n %s delete pod %s (the coordinator deletes its task Pods first)\n",
      name.c_str(), ns.c_str(), how.c_str(), pod.image.c_str(), pod.service_account.c_str(),
      pod.workflow_source.c_str(), name.c_str(), pod.workdir.c_str(), pod.state_dir.c_str(),
      (pod.volume_claim.empty() ? std::string("hostPath volumes on its node")
                                : "on PersistentVolumeClaim " + pod.volume_claim)
          .c_str(),
      ns.c_str(), name.c_str(), pod.state_dir.c_str(), pod.state_dir.c_str(), pod.state_dir.c_str(),
      ns.c_str(), name.c_str());
  if (!pod.resume_run.empty())
    std::printf("Resuming run %s: its Pods still running are adopted, and now owned by %s\n",
                pod.resume_run.c_str(), name.c_str());
  std::fflush(stdout);
  return kExitOk;
}

void add_submit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "submit", "Submit a workflow as a batch job (Slurm) or a coordinator Pod (Kubernetes)");
  auto a = std::make_shared<SubmitArgs>();
  cmd->add_option("file", a->file, "The workflow file (YAML)")->required();
  cmd->add_flag("--slurm", a->slurm, "Submit to Slurm through libslurm (SLURM_CONF is honoured)");
  cmd->add_option("-N,--nodes", a->nodes, "Number of nodes")->default_str("1");
  cmd->add_option("-t,--time", a->time_limit,
                  "Time limit: MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] (default: the partition's)");
  cmd->add_option("-p,--partition", a->partition, "Partition (default: the cluster's default)");
  cmd->add_option("-J,--job-name", a->job_name, "Job name (default: the workflow's name)");
  cmd->add_option("-o,--output", a->output,
                  "The job's output file (%j is the job id; default: slurm-%j.out here)");
  cmd->add_option("--state", a->state_dir,
                  "State folder for the run and submissions.json (default: .chorus here; with "
                  "--kubernetes: the coordinator's journal on the nodes, default WORKDIR/.chorus)");
  cmd->add_flag("--parsable", a->parsable, "Print only the job id (the Pod's name)");
  cmd->add_option("--server", a->server,
                  "A served instance's socket (chorus serve; default: CHORUS_SERVER, else the "
                  "state folder's serve.sock)");
  cmd->add_option("--key", a->key,
                  "With a server: a submission key of yours; submitting again with the same key "
                  "returns the same run (safe retries)");
  cmd->add_flag("--json", a->json, "With a server: print {\"run\": ID, \"again\": bool}");
  cmd->add_flag("--kubernetes", a->kubernetes,
                "Run the coordinator as a Pod on a Kubernetes cluster, its tasks as Pods");
  cmd->add_option("--kubeconfig", a->kubeconfig,
                  "With --kubernetes: the kubeconfig (default: $KUBECONFIG, ~/.kube/config)");
  cmd->add_option("--context", a->context, "With --kubernetes: the kubeconfig context");
  cmd->add_option("--namespace", a->namespace_name,
                  "With --kubernetes: the namespace of every Pod (default: the context's)");
  cmd->add_option("--image", a->image,
                  std::string("With --kubernetes: the coordinator's image, with chorus in it "
                              "(default: localhost/chorus:") +
                      version() + ", scripts/chorus-image.sh)");
  cmd->add_option("--image-pull-policy", a->image_pull_policy,
                  "With --kubernetes: the coordinator image's pull policy (default: IfNotPresent)")
      ->check(CLI::IsMember({"Always", "IfNotPresent", "Never"}));
  cmd->add_option("--service-account", a->service_account,
                  "With --kubernetes: the coordinator's service account (deploy/k8s/rbac.yaml)")
      ->default_str("chorus");
  cmd->add_option("--workdir", a->workdir,
                  "With --kubernetes: the working directory on the nodes, a hostPath shared with "
                  "the task Pods (default: this directory), or where --volume-claim is mounted "
                  "(default: /work)");
  cmd->add_option("--grace", a->grace,
                  "With --kubernetes: the tasks' time between SIGTERM and SIGKILL on cancel")
      ->default_str("5s");
  cmd->add_option("--wait-start", a->wait_start,
                  "With --kubernetes: seconds to wait for the coordinator Pod to start, so an "
                  "image that cannot be pulled is reported (0: do not wait)")
      ->default_str("30")
      ->check(CLI::Range(0, 3600));
  cmd->add_option("--volume-claim", a->volume_claim,
                  "With --kubernetes: a PersistentVolumeClaim (ReadWriteMany) that holds the "
                  "working directory and the journal, mounted at --workdir (default /work) in "
                  "the coordinator and every task Pod, instead of the nodes' own directory");
  cmd->add_option("--resume", a->resume,
                  "With --kubernetes: continue run RUN (or latest) from its journal in the "
                  "state folder, in a new coordinator Pod that adopts the run's Pods still "
                  "running");
  cmd->callback([a, cmd] {
    for (const char* o : {"--nodes", "--partition", "--output"})
      if (cmd->count(o) > 0) a->slurm_only.push_back(o);
    int code = submit_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"submit", add_submit_command};

}  // namespace
}  // namespace chorus::cli
