// What `chorus endpoints` prints of a run's services, from its journal: one line per replica
// (its state and where it listens), or with `env` the CHORUS_SERVICE_<NAME> lines a task using
// the services ready now receives. Shared by the command on a journal of its own and a served
// instance answering it (cmd_serve.cpp), so both print the same.
#pragma once

#include <vector>

#include "cli/output/output.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus::cli {

// `run`: its effective status (a run whose coordinator is gone has no live service).
void print_endpoints(const Output& out, const RunInfo& run, const std::vector<EventRecord>& events,
                     bool env);

}  // namespace chorus::cli
