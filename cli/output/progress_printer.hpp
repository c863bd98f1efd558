// ProgressPrinter: the live output of `chorus run` / `chorus launch`, through its Output — a
// progress line on a terminal, plain lines every 2 s otherwise (both on stderr), or one JSON
// object per event and line on stdout with --json.
#pragma once

#include <string>

#include "cli/output/output.hpp"
#include "runtime/run_observer.hpp"

namespace chorus::cli {

class ProgressPrinter final : public RunObserver {
 public:
  ProgressPrinter(const Output& out, std::string run_id);
  void on_run_started(const std::string& run_id) override;
  void on_event(const TaskSpec& task, const TaskEvent& event) override;
  // --json: flushes stdout once per batch, so a consumer on a pipe sees each event as soon as its
  // batch is journaled, without a write per event when a round finishes thousands of tasks.
  void on_events_done() override;
  void on_progress(const Progress& progress, bool final) override;
  bool wants_events() const override { return true; }

 private:
  void print_line(const Progress& p, bool final);

  Output out_;
  OutputMode mode_;
  std::string run_id_;
  double last_plain_ = -1e9;
  bool line_open_ = false;  // a terminal progress line is on screen without a newline
};

}  // namespace chorus::cli
