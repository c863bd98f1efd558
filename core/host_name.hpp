// This machine's host name: what the journal records as a run's host and what a run is compared
// with to tell whether its coordinator (or a task's node) is here.
#pragma once

#include <string>

namespace chorus {

// gethostname(2), or "localhost" when the machine has no name (the one place that asks).
std::string host_name();

}  // namespace chorus
