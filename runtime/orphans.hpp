// Finding what a killed coordinator left running. Every task process carries CHORUS_RUN_ID in its
// environment (the coordinator sets it), so the processes of a run can be recognised on this host
// without journaling pids: a process whose environment holds CHORUS_RUN_ID=<run> belongs to it.
#pragma once

#include <string>

namespace chorus {

// SIGKILLs every process on this host (that we may signal) whose environment has
// CHORUS_RUN_ID=<run_id>, and the process group of each that leads one; never the calling process.
// Called before a resumed run starts, so orphans of a coordinator killed with SIGKILL do not run
// beside their own reruns. Returns how many processes were killed.
int kill_orphans_of_run(const std::string& run_id);

}  // namespace chorus
