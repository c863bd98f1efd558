// chorus run FILE [--resume [RUN]]: run a workflow here, journaled, with progress and a summary.
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/progress_printer.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

CancelToken* g_cancel = nullptr;

extern "C" void on_interrupt(int) {
  if (g_cancel != nullptr) g_cancel->request();
}

// The last `max_lines` lines of a file (for showing a failed task's stderr).
std::string tail_of(const std::string& path, int max_lines) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  // Walk back over `max_lines` newlines; the tail starts after the last one found.
  std::size_t start = text.size();
  for (int n = 0; n < max_lines && start > 0; ++n) {
    std::size_t nl = text.rfind('\n', start - 1);
    if (nl == std::string::npos) {
      start = 0;
      break;
    }
    start = nl;
  }
  return start == 0 ? text : text.substr(start + 1);
}

struct RunArgs {
  std::string file;
  std::string resume;
  bool resume_given = false;
  std::string state_dir;
  std::string queue;  // empty = the workflow's choice, else fifo
  std::string grace = "5s";
  bool json = false;
  bool oversubscribe = false;
  bool fail_fast = false;
  double replay_scale = 0;  // > 0: replace each command by a sleep of estimate x scale
};

// --replay-scale: run a recorded trace's shape without its programs. Every task sleeps its
// `estimate` times the scale. A task without an estimate is an error (nothing to replay).
Status apply_replay_scale(WorkflowGraph& graph, double scale) {
  for (auto& t : graph.tasks) {
    if (t.estimate <= Duration::zero()) {
      return invalid_argument("task '" + t.name +
                              "' has no estimate: --replay-scale needs one on every task");
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.6f",
                  std::chrono::duration<double>(t.estimate).count() * scale);
    t.cmd.argv = {"sleep", seconds};
    t.cmd.shell.clear();
  }
  return {};
}

// Works out which run to resume and which file to read. Errors are printed; returns false then.
bool resolve_resume(RunArgs& a) {
  if (!a.resume_given) return true;
  // `chorus run --resume wf.yaml` — CLI11 hands the file to --resume; take it back.
  if (a.file.empty() && (a.resume.ends_with(".yaml") || a.resume.ends_with(".yml")) &&
      std::filesystem::exists(a.resume)) {
    a.file = a.resume;
    a.resume.clear();
  }
  auto store = open_sqlite_store(journal_path(resolve_state_dir(a.state_dir)));
  if (!store.ok()) {
    print_error(store.status().message());
    return false;
  }
  if (a.resume.empty()) {
    if (a.file.empty()) {
      print_error("--resume needs a run id or the workflow file");
      return false;
    }
    std::error_code ec;
    auto abs = std::filesystem::absolute(a.file, ec).lexically_normal().string();
    auto run = (*store)->latest_run_of(abs);
    if (!run.ok()) {
      print_error("no earlier run of " + a.file + " to resume (" + run.status().message() + ")");
      return false;
    }
    a.resume = run->id;
    return true;
  }
  auto run = (*store)->find_run(a.resume);
  if (!run.ok()) {
    print_error(run.status().message());
    return false;
  }
  a.resume = run->id;
  if (a.file.empty()) {
    if (run->workflow_path.empty()) {
      print_error("run '" + run->id + "' was not started from a file; give the workflow file");
      return false;
    }
    a.file = run->workflow_path;
  }
  return true;
}

int run_command(RunArgs a) {
  if (a.file.empty() && !a.resume_given) {
    print_error("give a workflow file: chorus run wf.yaml");
    return kExitBadInput;
  }
  if (!resolve_resume(a)) return kExitBadInput;
  auto grace = parse_duration(a.grace);
  if (!grace.ok()) {
    print_error("--grace: " + grace.status().message());
    return kExitBadInput;
  }
  auto graph = load_workflow_for_cli(a.file, a.oversubscribe);
  if (!graph.ok()) {
    print_error(graph.status().message());
    return kExitBadInput;
  }
  if (a.replay_scale > 0) {
    if (Status s = apply_replay_scale(*graph, a.replay_scale); !s.ok()) {
      print_error(s.message());
      return kExitBadInput;
    }
  }

  CancelToken cancel;
  g_cancel = &cancel;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // The run id is known only once the run is registered; the printer learns it from the first
  // event, so create it with the workflow name and fix the label below.
  OutputMode mode = pick_output_mode(a.json);
  std::string label = a.resume.empty() ? graph->name : a.resume;
  ProgressPrinter printer(mode, label);

  RunOptions options;
  options.state_dir = a.state_dir;
  options.resume_run = a.resume;
  options.queue = a.queue;
  options.oversubscribe = a.oversubscribe;
  options.fail_fast = a.fail_fast;
  options.kill_grace = *grace;
  options.cancel = &cancel;
  options.observer = &printer;
  auto outcome = run_workflow(*graph, options);
  g_cancel = nullptr;
  if (!outcome.ok()) {
    print_error(outcome.status().message());
    return outcome.status().code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError;
  }

  const auto& s = outcome->summary;
  const auto& p = s.progress;
  if (mode != OutputMode::json) {
    double ran = static_cast<double>(p.done() - p.skipped);
    std::fprintf(
        stderr,
        "%s: %s — %lld tasks: %lld succeeded%s, %lld failed, %lld cancelled in %s (%.1f tasks/s)\n",
        outcome->run.id.c_str(), to_string(s.status), static_cast<long long>(p.total),
        static_cast<long long>(p.succeeded),
        p.skipped > 0 ? (" (" + std::to_string(p.skipped) + " from earlier sessions)").c_str() : "",
        static_cast<long long>(p.failed), static_cast<long long>(p.cancelled),
        format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(p.elapsed_s * 1e9)))
            .c_str(),
        p.elapsed_s > 0 ? ran / p.elapsed_s : 0.0);
    std::size_t shown = 0;
    for (const auto& f : s.failures) {
      if (++shown > 10) {
        std::fprintf(stderr, "... and %zu more failed tasks (chorus status %s)\n",
                     s.failures.size() - 10, outcome->run.id.c_str());
        break;
      }
      std::fprintf(stderr, "\n%s %s: %s\n", f.name.c_str(), to_string(f.state), f.message.c_str());
      if (!f.stderr_path.empty()) {
        std::string tail = tail_of(f.stderr_path, 10);
        if (!tail.empty()) std::fprintf(stderr, "  stderr (last lines):\n%s\n", tail.c_str());
        std::fprintf(stderr, "  full output: chorus logs %s '%s'\n", outcome->run.id.c_str(),
                     f.name.c_str());
      }
    }
    if (s.status == RunStatus::cancelled || s.status == RunStatus::failed) {
      std::fprintf(stderr, "resume with: chorus run --resume %s\n", outcome->run.id.c_str());
    }
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

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a workflow on this machine (no server needed)");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("file", a->file, "The workflow file (YAML)");
  cmd->add_option(
         "--resume", a->resume,
         "Continue an interrupted run (a run id, or none to resume the latest run of FILE)")
      ->expected(0, 1)
      ->each([a](const std::string&) { a->resume_given = true; })
      ->trigger_on_parse();
  cmd->add_option("--state", a->state_dir,
                  "State folder (default: .chorus in the current directory)");
  cmd->add_option("--queue", a->queue,
                  "Queue policy, overriding the workflow's scheduler section (default: fifo)");
  cmd->add_option("--grace", a->grace, "Time between SIGTERM and SIGKILL on cancel or timeout")
      ->default_str("5s");
  cmd->add_flag("--json", a->json, "Print one JSON event per line instead of progress");
  cmd->add_flag("--oversubscribe", a->oversubscribe,
                "Start tasks even when their cores exceed this machine's free cores");
  cmd->add_flag("--fail-fast", a->fail_fast, "Start nothing new after the first task fails");
  cmd->add_option("--replay-scale", a->replay_scale,
                  "Replay mode: each task sleeps its recorded estimate times this factor "
                  "(for imported traces, e.g. 0.001)");
  cmd->callback([a, cmd] {
    if (cmd->count("--resume") > 0) a->resume_given = true;
    if (cmd->count("--replay-scale") > 0 && !(a->replay_scale > 0)) {
      print_error("--replay-scale must be a positive number (e.g. 0.001), got " +
                  std::to_string(a->replay_scale));
      throw CLI::RuntimeError(kExitBadInput);
    }
    int code = run_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"run", add_run_command};

}  // namespace
}  // namespace chorus::cli
