#include "cli/progress_printer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/json_text.hpp"
#include "core/units.hpp"

namespace chorus::cli {

OutputMode pick_output_mode(bool json) {
  if (json) return OutputMode::json;
  const char* term = std::getenv("TERM");
  bool dumb = term != nullptr && std::strcmp(term, "dumb") == 0;
  return isatty(STDERR_FILENO) && !dumb ? OutputMode::terminal : OutputMode::plain;
}

ProgressPrinter::ProgressPrinter(OutputMode mode, std::string run_id)
    : mode_(mode), run_id_(std::move(run_id)) {}

void ProgressPrinter::on_run_started(const std::string& run_id) {
  run_id_ = run_id;
  if (mode_ == OutputMode::json) {
    std::string line = json_text(nlohmann::json{{"event", "run"}, {"run", run_id_}}) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  } else {
    std::fprintf(stderr, "%s: started (journal: chorus status %s)\n", run_id_.c_str(),
                 run_id_.c_str());
  }
}

void ProgressPrinter::on_event(const TaskSpec& task, const TaskEvent& e) {
  if (mode_ == OutputMode::json) {
    nlohmann::json j{{"event", "task"},      {"run", run_id_},
                     {"task", task.name},    {"state", to_string(e.state)},
                     {"attempt", e.attempt}, {"time", e.time}};
    if (is_terminal(e.state) || e.state == TaskState::failed) j["exit_code"] = e.exit_code;
    if (!e.detail.empty()) j["detail"] = e.detail;
    std::string line = json_text(j);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    return;
  }
  // Failures are worth a line of their own in both human modes; other events only feed the counts.
  if (e.state == TaskState::failed || e.state == TaskState::timed_out) {
    if (line_open_) std::fputs("\r\x1b[K", stderr);
    const std::string attempt =
        e.attempt == 0 ? "not started" : "attempt " + std::to_string(e.attempt);
    std::fprintf(stderr, "task '%s' %s (%s): %s\n", task.name.c_str(), to_string(e.state),
                 attempt.c_str(), e.detail.c_str());
    line_open_ = false;
  }
}

void ProgressPrinter::on_events_done() {
  if (mode_ == OutputMode::json) std::fflush(stdout);
}

void ProgressPrinter::on_progress(const Progress& p, bool final) {
  if (mode_ == OutputMode::json) {
    if (!final) return;
    nlohmann::json j{{"event", "summary"},   {"run", run_id_},
                     {"total", p.total},     {"succeeded", p.succeeded},
                     {"failed", p.failed},   {"cancelled", p.cancelled},
                     {"skipped", p.skipped}, {"elapsed_s", p.elapsed_s}};
    std::string line = json_text(j);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    return;
  }
  if (mode_ == OutputMode::plain && !final && p.elapsed_s - last_plain_ < 2.0) return;
  last_plain_ = p.elapsed_s;
  print_line(p, final);
}

void ProgressPrinter::print_line(const Progress& p, bool final) {
  double ran = static_cast<double>(p.done() - p.skipped);
  double rate = p.elapsed_s > 0 ? ran / p.elapsed_s : 0;
  char eta[32] = "-";
  std::int64_t left = p.total - p.done();
  if (rate > 0 && left > 0) {
    std::snprintf(
        eta, sizeof eta, "%s",
        format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(left / rate * 1e9)))
            .c_str());
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %lld/%lld done, %lld running, %lld failed%s | %.1f tasks/s | ETA %s%s",
                run_id_.c_str(), static_cast<long long>(p.done()), static_cast<long long>(p.total),
                static_cast<long long>(p.running), static_cast<long long>(p.failed),
                p.cancelling ? " | cancelling" : "", rate, eta, "");
  if (mode_ == OutputMode::terminal) {
    std::fprintf(stderr, "\r\x1b[K%s", line);
    line_open_ = !final;
    if (final) std::fputc('\n', stderr);
  } else if (!final) {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

}  // namespace chorus::cli
