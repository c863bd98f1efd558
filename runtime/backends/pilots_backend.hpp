// The pilots backend: a served instance's automatic allocation on Slurm (docs/serve.md). When
// ready work waits, it submits pilot jobs through libslurm; each pilot's nodes run one agent
// each (one srun step in the job), which connect back here like `chorus launch`'s agents; an
// idle pilot is released (scancel) after idle_timeout.
//
// Nodes: placement sees max_jobs x nodes fixed slots, "pilot<J>-<K>" (pilot J's K-th node, the
// agent's --node; SLURM_NODEID picks K), each with the partition's cores per node. A slot is
// "not now" for placement until its agent registers, while its pilot is being released, and for
// a task whose timeout would outlast the pilot's walltime (its end from Slurm); tasks without a
// timeout may go anywhere live. A pilot that ends under a task loses it: the coordinator queues
// it again (CoordinatorOptions::lost_requeues) without using one of its retries.
//
// Threads: a pilot thread owns the SlurmClient and, once per `round`, makes ONE batched status
// query for all pilots, then submits or releases. It learns the demand from on_turn() (the
// coordinator's thread: queued tasks, and each pilot's running tasks from the AgentLauncher)
// through atomics (work arriving in an idle instance wakes it at once); placement reads the pilots'
// end times and draining flags the same way. Never a Slurm request on the coordinator's thread.
//
// Rules: a pilot is submitted when tasks are queued, no pilot is pending or starting, and fewer
// than max_jobs exist (so the pilots grow one at a time while the queue stays non-empty; with
// pilots up, non-empty for two rounds in a row). Pilots an earlier instance on the same state
// folder left (<state>/pilots/jobs) are cancelled at start. A pilot
// whose agents have run nothing for idle_timeout is first drained (placement stops using it),
// then cancelled the next round if still idle; a pending pilot is cancelled the same way when
// the queue has been empty for idle_timeout.
#pragma once

#include <memory>
#include <string>

#include "core/units.hpp"
#include "runtime/backends/execution_backend.hpp"

namespace chorus {

struct PilotsBackendOptions {
  std::string partition;  // empty: the default partition
  int max_jobs = 1;
  int nodes = 1;           // per pilot
  int cores_per_node = 1;  // the slots' capacity (SlurmClient::partition)
  Duration walltime = std::chrono::minutes(30);
  Duration idle_timeout = std::chrono::minutes(2);
  Duration round = std::chrono::seconds(1);  // the pilot thread's cadence
  // Where the agents connect: default tcp://<this host's address>:*.
  std::string listen;
  std::string chorus;  // the executable the pilots run; default: this process's
  Duration agent_timeout = std::chrono::seconds(10);
  Duration kill_grace = std::chrono::seconds(5);
  int function_threads = 0;
};

// Errors of start(): the agents' endpoint ("cannot start the agents' endpoint: ..."), libslurm
// ("cannot open libslurm: ..."). Pilot submissions that Slurm refuses later are logged on
// stderr with Slurm's words and retried the next round.
std::unique_ptr<ExecutionBackend> make_pilots_backend(PilotsBackendOptions options);

}  // namespace chorus
