#include "cli/output/progress_printer.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/units.hpp"

namespace chorus::cli {

ProgressPrinter::ProgressPrinter(const Output& out, std::string run_id)
    : out_(out), mode_(out.mode()), run_id_(std::move(run_id)) {}

void ProgressPrinter::on_run_started(const std::string& run_id) {
  run_id_ = run_id;
  if (mode_ == OutputMode::json) {
    out_.json_line(nlohmann::json{{"event", "run"}, {"run", run_id_}});
    out_.flush();
  } else {
    std::fprintf(out_.err(), "%s: started (journal: chorus status %s)\n", run_id_.c_str(),
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
    out_.json_line(j);  // flushed with its batch, in on_events_done
    return;
  }
  // Failures are worth a line of their own in both human modes; other events only feed the counts.
  if (e.state == TaskState::failed || e.state == TaskState::timed_out) {
    if (line_open_) std::fputs("\r\x1b[K", out_.err());
    const std::string attempt =
        e.attempt == 0 ? "not started" : "attempt " + std::to_string(e.attempt);
    std::fprintf(out_.err(), "task '%s' %s (%s): %s\n", task.name.c_str(), to_string(e.state),
                 attempt.c_str(), e.detail.c_str());
    line_open_ = false;
  }
}

void ProgressPrinter::on_events_done() {
  if (mode_ == OutputMode::json) out_.flush();
}

void ProgressPrinter::on_progress(const Progress& p, bool final) {
  if (mode_ == OutputMode::json) {
    if (!final) return;
    nlohmann::json j{{"event", "summary"},   {"run", run_id_},
                     {"total", p.total},     {"succeeded", p.succeeded},
                     {"failed", p.failed},   {"cancelled", p.cancelled},
                     {"skipped", p.skipped}, {"elapsed_s", p.elapsed_s}};
    out_.json_line(j);
    out_.flush();
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
    std::fprintf(out_.err(), "\r\x1b[K%s", line);
    line_open_ = !final;
    if (final) std::fputc('\n', out_.err());
  } else if (!final) {
    std::fprintf(out_.err(), "%s\n", line);
  }
  std::fflush(out_.err());
}

}  // namespace chorus::cli
