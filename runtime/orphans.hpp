// Finding what a killed coordinator left running, without ever touching another run's processes.
// Two ways, both verified:
// - the task groups the coordinator journaled (pgid + the leader's start time, see TaskGroup): a
//   group is killed only when its leader still has that start time on the same boot, so a pgid
//   reused by an unrelated process is never hit. This finds tasks that emptied their environment.
// - the environment: every task process carries CHORUS_RUN_TOKEN=<the run's random token>, which
//   no other run has (run ids repeat across state folders, tokens do not). This finds what a task
//   left in another process group, and tasks launched after the last journaled groups.
// What still escapes is listed in runtime/README.md ("Orphans").
#pragma once

#include <span>

#include "runtime/store/state_store.hpp"

namespace chorus {

// SIGKILLs, on this host, each of `groups` whose leader is verified (see above) and whose attempt
// `previous` (the run's replayed journal) still has running, then every process whose environment
// holds CHORUS_RUN_TOKEN=<run.token> and the group of each that leads one; never the calling
// process. A run journaled before tokens existed (empty token) matches CHORUS_RUN_ID=<run.id> in
// processes that carry no CHORUS_RUN_TOKEN at all (what older builds launched). Called before a
// resumed run starts, so the orphans of a coordinator killed with SIGKILL do not run beside their
// own reruns. Returns how many processes and groups were killed.
int kill_orphans_of_run(const RunInfo& run, std::span<const TaskGroup> groups,
                        const RunState& previous);

}  // namespace chorus
