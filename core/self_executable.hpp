// The path of the running executable, for re-running it elsewhere (agents in an srun step, a
// pilot job's agents, a submitted coordinator).
#pragma once

#include <string>

namespace chorus {

// /proc/self/exe resolved; "chorus" (found on PATH) when it cannot be read.
std::string self_executable();

}  // namespace chorus
