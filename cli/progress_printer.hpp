// ProgressPrinter: the one output layer of `chorus run` — a live line on a terminal, plain lines
// otherwise, or one JSON object per line with --json.
#pragma once

#include <cstdio>
#include <string>

#include "runtime/run_observer.hpp"

namespace chorus::cli {

enum class OutputMode { terminal, plain, json };

class ProgressPrinter final : public RunObserver {
 public:
  ProgressPrinter(OutputMode mode, std::string run_id);
  void on_run_started(const std::string& run_id) override;
  void on_event(const TaskSpec& task, const TaskEvent& event) override;
  // --json: flushes stdout once per batch, so a consumer on a pipe sees each event as soon as its
  // batch is journaled, without a write per event when a round finishes thousands of tasks.
  void on_events_done() override;
  void on_progress(const Progress& progress, bool final) override;
  bool wants_events() const override { return true; }

 private:
  void print_line(const Progress& p, bool final);

  OutputMode mode_;
  std::string run_id_;
  double last_plain_ = -1e9;
  bool line_open_ = false;  // a terminal progress line is on screen without a newline
};

// terminal when stderr is a TTY and TERM is not "dumb"; json when asked.
OutputMode pick_output_mode(bool json);

}  // namespace chorus::cli
