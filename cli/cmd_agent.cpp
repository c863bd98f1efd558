// chorus agent --connect tcp://HOST:PORT --keys DIR [--node NAME] [--node-logs DIR]: run the
// tasks a coordinator sends to this node (see runtime/agent/agent.hpp). Started by `chorus
// launch` (one srun step for all nodes of an allocation) or by hand for `chorus run --agents N`.
// --keys is the run's key folder: the agent takes its node's pair, or claims a free slot
// (find_agent_keys in runtime/transport/curve_keys.hpp).

#include <cstdlib>
#include <optional>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "cli/run_common.hpp"
#include "core/node_info.hpp"
#include "runtime/agent/agent.hpp"

namespace chorus::cli {
namespace {

std::optional<std::int64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (end == v || n <= 0) return std::nullopt;
  return n;
}

void add_agent_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "agent", "Run tasks on this node for a coordinator (chorus launch, chorus run --agents)");
  struct Args {
    std::string connect;
    std::string keys;
    std::string node;
    int cores = 0;
    std::int64_t memory_mb = -1;
    int gpus = 0;
    std::string timeout = "30s";
    std::string node_logs;
    bool dry_run = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--connect", a->connect, "The coordinator's address, tcp://HOST:PORT")
      ->required();
  cmd->add_option("--keys", a->keys,
                  "The run's key folder (this node's pair is taken from it, or a free slot)")
      ->required();
  cmd->add_option("--node", a->node,
                  "Node name to register as (default: $SLURMD_NODENAME, else the host name)");
  cmd->add_option("--cores", a->cores,
                  "Cores to offer (default: $SLURM_CPUS_ON_NODE, else this machine's)");
  cmd->add_option("--memory", a->memory_mb,
                  "Memory to offer in MB (default: $SLURM_MEM_PER_NODE, else this machine's)");
  cmd->add_option("--gpus", a->gpus, "GPUs to offer")->default_str("0");
  cmd->add_option("--timeout", a->timeout,
                  "Exit when the coordinator is silent this long before registering")
      ->default_str("30s");
  cmd->add_option("--node-logs", a->node_logs,
                  "Keep task output on this node in DIR/<run id>/ (%n = node name); chorus logs "
                  "fetches it while the run lives, failed tasks' output is collected");
  cmd->add_flag("--dry-run", a->dry_run,
                "Benchmarks only: report every task succeeded at once without running it "
                "(measures the dispatch path alone)");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    auto timeout = parse_duration(a->timeout);
    if (!timeout.ok()) {
      out.error("--timeout: " + timeout.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    NodeInfo here = local_node_info();
    AgentOptions options;
    options.endpoint = a->connect;
    options.silence_timeout = *timeout;
    options.dry_run = a->dry_run;
    const char* slurm_node = std::getenv("SLURMD_NODENAME");
    options.node = !a->node.empty()                            ? a->node
                   : slurm_node != nullptr && *slurm_node != 0 ? slurm_node
                                                               : here.name;
    auto keys = find_agent_keys(a->keys, options.node);
    if (!keys.ok()) {
      out.error("agent " + options.node + ": " + keys.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    options.keys = *keys;
    options.log_dir = a->node_logs;
    options.capacity = here.capacity;
    if (a->cores > 0) {
      options.capacity.cores = a->cores;
    } else if (auto c = env_number("SLURM_CPUS_ON_NODE")) {
      options.capacity.cores = static_cast<int>(*c);
    }
    if (a->memory_mb >= 0) {
      options.capacity.memory_mb = a->memory_mb;
    } else if (auto m = env_number("SLURM_MEM_PER_NODE")) {
      options.capacity.memory_mb = *m;
    }
    options.capacity.gpus = a->gpus;

    CancelToken stop;
    handle_interrupts(&stop);  // SIGINT/SIGTERM/SIGHUP stop the agent (it kills its tasks first)
    Status s = run_agent(options, &stop);
    handle_interrupts(nullptr);
    if (s.ok()) return;
    out.error("agent " + options.node + ": " + s.message());
    if (s.code() == ErrorCode::cancelled) throw CLI::RuntimeError(kExitCancelled);
    throw CLI::RuntimeError(s.code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError);
  });
}

const CommandRegistrar registrar{"agent", add_agent_command};

}  // namespace
}  // namespace chorus::cli
