#include "cli/run_common.hpp"

#include <signal.h>
#include <cstdio>
#include <filesystem>

#include "core/file_tail.hpp"

namespace chorus::cli {
namespace {

CancelToken* g_cancel = nullptr;

extern "C" void on_interrupt(int) {
  if (g_cancel != nullptr) g_cancel->request();
}

}  // namespace

std::string tail_of(const std::string& path, int max_lines) {
  return file_tail(path, max_lines);
}

bool resolve_resume(std::string& file, std::string& resume, bool resume_given,
                    const std::string& state_dir) {
  if (!resume_given) return true;
  // `chorus run --resume wf.yaml` — CLI11 hands the file to --resume; take it back.
  if (file.empty() && (resume.ends_with(".yaml") || resume.ends_with(".yml")) &&
      std::filesystem::exists(resume)) {
    file = resume;
    resume.clear();
  }
  auto store = open_sqlite_store(journal_path(resolve_state_dir(state_dir)));
  if (!store.ok()) {
    print_error(store.status().message());
    return false;
  }
  if (resume.empty()) {
    if (file.empty()) {
      print_error("--resume needs a run id or the workflow file");
      return false;
    }
    std::error_code ec;
    auto abs = std::filesystem::absolute(file, ec).lexically_normal().string();
    auto run = (*store)->latest_run_of(abs);
    if (!run.ok()) {
      print_error("no earlier run of " + file + " to resume (" + run.status().message() + ")");
      return false;
    }
    resume = run->id;
    return true;
  }
  auto run = (*store)->find_run(resume);
  if (!run.ok()) {
    print_error(run.status().message());
    return false;
  }
  resume = run->id;
  if (file.empty()) {
    if (run->workflow_path.empty()) {
      print_error("run '" + run->id + "' was not started from a file; give the workflow file");
      return false;
    }
    file = run->workflow_path;
  }
  return true;
}

void handle_interrupts(CancelToken* cancel) {
  g_cancel = cancel;
  if (cancel == nullptr) return;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

namespace {

// Prints the summary (unless json) and returns the exit status.
int finish_run(const Result<RunOutcome>& outcome, const Output& out, const std::string& command) {
  if (!outcome.ok()) {
    out.error(outcome.status().message());
    return outcome.status().code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError;
  }
  const auto& s = outcome->summary;
  if (!out.json()) {
    RunReport report{*outcome, command, {}};
    for (std::size_t i = 0; i < s.failures.size() && i < Output::kShownFailures; ++i) {
      const std::string& path = s.failures[i].stderr_path;
      report.stderr_tails.push_back(path.empty() ? std::string() : tail_of(path, 10));
    }
    out.run_summary(report);
  }
  switch (s.status) {
    case RunStatus::succeeded:
      return kExitOk;
    case RunStatus::cancelled:
      return kExitCancelled;
    default:
      return kExitTasksFailed;
  }
}

}  // namespace

std::optional<Duration> prepare_run(CommonRunArgs& a, const std::string& command) {
  if (a.file.empty() && !a.resume_given) {
    print_error("give a workflow file: " + command + " wf.yaml");
    return std::nullopt;
  }
  if (!resolve_resume(a.file, a.resume, a.resume_given, a.state_dir)) return std::nullopt;
  auto grace = parse_duration(a.grace);
  if (!grace.ok()) {
    print_error("--grace: " + grace.status().message());
    return std::nullopt;
  }
  return *grace;
}

std::optional<AgentTimes> parse_agent_times(const CommonRunArgs& a) {
  auto timeout = parse_duration(a.agent_timeout);
  if (!timeout.ok() || *timeout <= Duration::zero()) {
    print_error("--agent-timeout: " +
                (timeout.ok() ? std::string("must be positive") : timeout.status().message()));
    return std::nullopt;
  }
  auto wait = parse_duration(a.agent_wait);
  if (!wait.ok()) {
    print_error("--agent-wait: " + wait.status().message());
    return std::nullopt;
  }
  return AgentTimes{*timeout, *wait};
}

void report_all_agents_lost(const std::string& why) {
  print_error(why + ": nothing can run any more; stopping the run");
}

int run_and_report(const CommonRunArgs& a, Duration grace, const WorkflowGraph& graph,
                   RunOptions options, const std::string& command, ExecutionBackend* backend) {
  CancelToken cancel;
  handle_interrupts(&cancel);
  if (backend != nullptr) {
    if (Status s = backend->start({&cancel, resolve_state_dir(a.state_dir)}); !s.ok()) {
      handle_interrupts(nullptr);
      print_error(s.message());
      return s.code() == ErrorCode::cancelled ? kExitCancelled : kExitError;
    }
  }
  const Output out = Output::for_command(a.json);
  // Labelled with the run id once the run is registered (RunObserver::on_run_started).
  ProgressPrinter printer(out, a.resume.empty() ? graph.name : a.resume);
  options.state_dir = a.state_dir;
  options.resume_run = a.resume;
  options.fail_fast = a.fail_fast;
  options.kill_grace = grace;
  options.cancel = &cancel;
  options.observer = &printer;
  options.backend = backend;
  auto outcome = run_workflow(graph, options);
  handle_interrupts(nullptr);
  if (backend != nullptr) {
    backend->stop();  // tells the agents to exit
    if (std::string left = backend->stop_problem(); !left.empty()) print_error(left);
  }
  return finish_run(outcome, out, command);
}

void add_common_run_options(CLI::App* cmd, const std::shared_ptr<CommonRunArgs>& a) {
  cmd->add_option("file", a->file, "The workflow file (YAML)");
  cmd->add_option(
         "--resume", a->resume,
         "Continue an interrupted run (a run id, or none to resume the latest run of FILE)")
      ->expected(0, 1)
      ->each([a](const std::string&) { a->resume_given = true; })
      ->trigger_on_parse();
  cmd->add_option("--state", a->state_dir,
                  "State folder (default: .chorus in the current directory)");
  cmd->add_option("--grace", a->grace, "Time between SIGTERM and SIGKILL on cancel or timeout")
      ->default_str("5s");
  cmd->add_flag("--json", a->json, "Print one JSON event per line instead of progress");
  cmd->add_flag("--fail-fast", a->fail_fast, "Start nothing new after the first task fails");
  cmd->add_option("--agents", a->agents,
                  "Run executable tasks on N agents started by hand (chorus agent --connect ...); "
                  "placement sees their nodes");
  cmd->add_option("--listen", a->listen,
                  "Address the coordinator binds for agents, tcp://IP:PORT (PORT * = any free "
                  "port; default: 127.0.0.1, or the allocation's interface under chorus launch)");
  cmd->add_option("--agent-timeout", a->agent_timeout,
                  "An agent silent this long is lost (its tasks retried elsewhere); agents exit "
                  "when the coordinator is silent this long")
      ->default_str("10s");
  cmd->add_option("--agent-wait", a->agent_wait, "How long to wait for agents to register")
      ->default_str("2m");
}

void note_resume(CLI::App* cmd, CommonRunArgs& a) {
  if (cmd->count("--resume") > 0) a.resume_given = true;
}

}  // namespace chorus::cli
