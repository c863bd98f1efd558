// What `chorus status` shows of a run, from the journal: computed here for the command and for a
// served instance answering it (cli/cmd_serve.cpp).
#pragma once

#include "cli/output/results.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus::cli {

// `nodes`: also what ran on each node (reads the run's events).
RunStatusReport make_status_report(StateStore& store, const RunInfo& run, const RunState& state,
                                   bool all_tasks, bool nodes);

}  // namespace chorus::cli
