// What `chorus run` and `chorus launch` share: finding the run to resume, Ctrl-C handling, and
// the closing summary (failures with their stderr tails) and exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/run_workflow.hpp"
#include "cli/progress_printer.hpp"

namespace chorus::cli {

// The options `chorus run` and `chorus launch` both take.
struct CommonRunArgs {
  std::string file;
  std::string resume;
  bool resume_given = false;
  std::string state_dir;
  std::string grace = "5s";
  bool json = false;
  bool fail_fast = false;
  // Agents (runtime/agent): `chorus run --agents N` waits for N agents started by hand.
  int agents = 0;
  std::string listen;                 // tcp://IP:PORT the coordinator binds for agents
  std::string agent_timeout = "10s";  // an agent silent this long is lost (and vice versa)
  std::string agent_wait = "2m";      // how long to wait for agents to register
};

// --agent-timeout (positive) and --agent-wait, for the backends with agents. Errors are
// printed; returns nullopt then.
struct AgentTimes {
  Duration timeout;
  Duration wait;
};
std::optional<AgentTimes> parse_agent_times(const CommonRunArgs& a);

// What the CLI says when the last live agent is lost during a run (the backend then stops it).
void report_all_agents_lost(const std::string& why);

// Declares them on `cmd`: FILE, --resume [RUN], --state, --grace, --json, --fail-fast, --agents,
// --listen, --agent-timeout, --agent-wait. Call
// `note_resume(cmd, *a)` first thing in the command's callback (a bare --resume sets no value).
void add_common_run_options(CLI::App* cmd, const std::shared_ptr<CommonRunArgs>& a);
void note_resume(CLI::App* cmd, CommonRunArgs& a);

// The last `max_lines` lines of a file (for showing a failed task's stderr); "" if unreadable.
std::string tail_of(const std::string& path, int max_lines);

// Works out which run to resume (`resume`: an id, a prefix, or empty = the latest run of `file`)
// and which file to read (empty `file`: the run's own). Errors are printed; returns false then.
// Does nothing unless `resume_given`.
bool resolve_resume(std::string& file, std::string& resume, bool resume_given,
                    const std::string& state_dir);

// SIGINT/SIGTERM/SIGHUP request `cancel` (until the next call with nullptr); SIGPIPE ignored.
void handle_interrupts(CancelToken* cancel);

// Checks what `chorus run` and `chorus launch` both check before reading the workflow: a file or
// a run to resume (then resolves it), and --grace. Errors are printed; returns nullopt then.
std::optional<Duration> prepare_run(CommonRunArgs& a, const std::string& command);

// Runs `graph` with `options` plus the common ones (state, resume, fail-fast, grace), Ctrl-C
// handling and progress output; prints the summary (unless --json) and returns the exit status.
// `command` ("chorus run") is what the summary tells the user to resume with.
// A `backend` (runtime/backends/: agents, an allocation) is started first, with the run's
// Ctrl-C token and state folder; a start that fails prints its error and stops there
// (kExitError, or kExitCancelled when cancelled while waiting for agents). It is stopped after
// the run. Null: this machine.
int run_and_report(const CommonRunArgs& a, Duration grace, const WorkflowGraph& graph,
                   RunOptions options, const std::string& command,
                   ExecutionBackend* backend = nullptr);

}  // namespace chorus::cli
