// chorus launch FILE [--resume [RUN]]: run a workflow INSIDE a Slurm allocation, across its nodes.
// Placement sees the allocation's nodes. Executable tasks run on one agent per node, all agents
// started by ONE srun step (--no-agents: each task its own srun step instead); MPI tasks run as
// `srun --mpi=pmix` steps on the node chosen; function tasks in this process.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "adapters/mpi/mpi_launcher.hpp"
#include "adapters/slurm/allocation.hpp"
#include "adapters/slurm/srun_launcher.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "cli/run_common.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

struct LaunchArgs : CommonRunArgs {
  bool no_agents = false;
  std::string node_logs;  // agents keep task output on their node, here (%n = node name)
};

// The address of this host's interface that the allocation's nodes reach it through: the source
// address the kernel routes to the first other node that resolves (a UDP connect sends nothing),
// else what this host's name resolves to. Never a wildcard: nothing needs to listen on other
// interfaces.
std::string ipv4_of(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return {};
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr, ip, sizeof ip);
  freeaddrinfo(res);
  return ip;
}

std::string allocation_interface(const std::vector<NodeInfo>& nodes) {
  char host[256] = {};
  std::string self = gethostname(host, sizeof host - 1) == 0 ? ipv4_of(host) : "";
  for (const auto& n : nodes) {
    std::string peer = ipv4_of(n.name);
    if (peer.empty() || peer == self) continue;
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    inet_pton(AF_INET, peer.c_str(), &to.sin_addr);
    sockaddr_in from{};
    socklen_t len = sizeof from;
    std::string ip;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) == 0) {
      char buf[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &from.sin_addr, buf, sizeof buf);
      ip = buf;
    }
    ::close(fd);
    if (!ip.empty()) return ip;
    break;
  }
  return self.empty() ? "127.0.0.1" : self;
}

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "chorus" : p.string();
}

// The one srun step that starts an agent on every node of the allocation. --overlap: the agents
// share their CPUs with later steps (MPI tasks' srun --mpi=pmix), which otherwise would wait for
// CPUs the agents hold. The job itself needs --no-kill (sbatch) to outlive a failed node.
std::vector<std::string> agent_step_argv(std::size_t nodes, const std::string& endpoint,
                                         const std::string& key_dir, const std::string& timeout,
                                         const std::string& node_logs) {
  const std::string n = std::to_string(nodes);
  std::vector<std::string> argv = {
      "srun", "--overlap", "--nodes=" + n, "--ntasks=" + n, "--ntasks-per-node=1",
      "--cpus-per-task=1", "--kill-on-bad-exit=0",
      // A node that fails takes its own agent down, not the whole step (the other agents).
      "--no-kill", "--quiet", "--job-name=chorus-agents", self_exe(), "agent", "--connect",
      endpoint, "--keys", key_dir, "--timeout", timeout};
  if (!node_logs.empty()) {
    argv.push_back("--node-logs");
    argv.push_back(node_logs);  // %n is expanded by each agent, with its own node name
  }
  return argv;
}

// Runs the agent step in its own process group, output to a file beside the key folder.
class AgentStep {
 public:
  explicit AgentStep(Duration grace) : local_(LocalLauncherOptions{grace}) {}
  Status start(std::vector<std::string> argv, const std::string& log_path) {
    spec_.name = "chorus-agents";
    spec_.id = 0;
    spec_.cmd.argv = std::move(argv);
    LaunchRequest r;
    r.spec = &spec_;
    r.stdout_path = log_path;
    r.stderr_path = log_path;
    log_path_ = log_path;
    auto h = local_.launch(r);
    if (!h.ok()) return h.status();
    return {};
  }
  // While the agents register: the step must still run.
  Status check() {
    if (local_.in_flight() == 0) return {};
    done_.clear();
    local_.poll(done_);
    if (done_.empty()) return {};
    const StateUpdate& u = done_.front();
    std::string how = u.message.empty() ? "exited with code 0" : u.message;
    std::string tail = tail_of(log_path_, 5);
    return Status(ErrorCode::unavailable, "the srun step that starts the agents ended (" + how +
                                              ")" + (tail.empty() ? "" : ": " + tail));
  }
  // After the agents were told to shut down: the step ends by itself; bounded, then killed.
  void finish() {
    std::vector<StateUpdate> done;
    for (int i = 0; i < 200 && local_.in_flight() > 0; ++i) {
      local_.poll(done);
      if (local_.in_flight() > 0) usleep(50 * 1000);
    }
    // The LocalLauncher's destructor kills what is left.
  }
  const std::string& log_path() const { return log_path_; }

 private:
  LocalLauncher local_;
  std::vector<StateUpdate> done_;
  TaskSpec spec_;
  std::string log_path_;
};

int launch_command(LaunchArgs a) {
  auto alloc = read_slurm_allocation();
  if (!alloc.ok()) {
    if (std::getenv("SLURM_JOB_ID") == nullptr) {
      print_error(
          "chorus launch runs inside a Slurm allocation (SLURM_JOB_ID is not set); use chorus run "
          "here or chorus submit --slurm");
    } else {
      print_error("cannot read the Slurm allocation: " + alloc.status().message());
    }
    return kExitBadInput;
  }
  auto grace = prepare_run(a, "chorus launch");
  if (!grace) return kExitBadInput;
  auto graph = load_workflow_for_cli(a.file, alloc->nodes);
  if (!graph.ok()) {
    print_error(graph.status().message());
    return kExitBadInput;
  }
  if (!graph->scheduler.planner.empty()) {
    // Refused rather than ignored: the plan would need the agents' nodes before they register.
    print_error(a.file + ":" + std::to_string(graph->scheduler.planner_line) + ":" +
                std::to_string(graph->scheduler.planner_column) +
                ": 'planner: " + graph->scheduler.planner +
                "' is not supported by chorus launch yet (chorus run places by a plan); remove "
                "it to run with the queue and placement policies");
    return kExitBadInput;
  }
  LocalLauncherOptions local{*grace};
  SrunLauncher srun(local);
  MpiLauncher mpi(std::make_unique<SrunMpiCommand>(), local);
  RunOptions options;
  options.nodes = alloc->nodes;
  options.executable_launcher = &srun;
  options.mpi_launcher = &mpi;
  if (a.no_agents) {
    if (!a.node_logs.empty()) {
      print_error("--node-logs needs agents (it is where they keep task output); drop --no-agents");
      return kExitBadInput;
    }
    return run_and_report(a, *grace, *graph, std::move(options), "chorus launch");
  }

  AgentStep step(*grace);
  AgentStarter starter;
  for (const auto& n : alloc->nodes) starter.nodes.push_back(n.name);
  starter.listen = "tcp://" + allocation_interface(alloc->nodes) + ":*";
  starter.start = [&](const std::string& endpoint, const std::string& key_dir) {
    return step.start(
        agent_step_argv(alloc->nodes.size(), endpoint, key_dir, a.agent_wait, a.node_logs),
        key_dir + ".log");
  };
  starter.watch = [&] { return step.check(); };
  starter.finish = [&] { step.finish(); };
  int code = run_and_report(a, *grace, *graph, std::move(options), "chorus launch", &starter);
  if (code == kExitError) {
    std::string tail = tail_of(step.log_path(), 10);
    if (!tail.empty()) std::fprintf(stderr, "agent step output (last lines):\n%s\n", tail.c_str());
  }
  return code;
}

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "launch", "Run a workflow across the nodes of the Slurm allocation this runs in");
  auto a = std::make_shared<LaunchArgs>();
  add_common_run_options(cmd, a);
  cmd->add_flag("--no-agents", a->no_agents,
                "Run each executable task as its own srun step instead of on agents");
  cmd->add_option("--node-logs", a->node_logs,
                  "Agents keep task output on their node in DIR/<run id>/ (%n = node name, e.g. "
                  "/tmp/slurm-tmp/%n/chorus); chorus logs fetches it while the run lives, failed "
                  "tasks' output is collected into the run folder");
  cmd->callback([a, cmd] {
    note_resume(cmd, *a);
    int code = launch_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"launch", add_launch_command};

}  // namespace
}  // namespace chorus::cli
