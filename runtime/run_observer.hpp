// RunObserver: how progress leaves the coordinator (the CLI's progress line and JSON events, an
// embedding application's callbacks). Called on the coordinator's thread; must not block for long.
#pragma once

#include <cstdint>
#include <string>

#include "core/task_spec.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus {

struct Progress {
  std::int64_t total = 0;
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;  // failed or timed out for good (no retries left)
  std::int64_t cancelled = 0;
  std::int64_t dropped = 0;  // of the cancelled: dropped by a quorum (not a failure)
  std::int64_t running = 0;
  std::int64_t skipped = 0;  // succeeded in an earlier session of a resumed run
  double elapsed_s = 0;
  bool cancelling = false;

  std::int64_t done() const { return succeeded + failed + cancelled; }
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Once the run is registered in the journal, before any task starts.
  virtual void on_run_started(const std::string& /*run_id*/) {}
  // After each journaled transition of a task (already durable).
  virtual void on_event(const TaskSpec& /*task*/, const TaskEvent& /*event*/) {}
  // After the on_event calls of one journaled batch (one per scheduler round, not per event):
  // where an observer that buffers its output flushes it.
  virtual void on_events_done() {}
  // About every tick_interval while the run goes on, and once at the end (final == true).
  virtual void on_progress(const Progress& /*progress*/, bool /*final*/) {}
  // Whether on_event should be called at all (lets the hot path skip the calls).
  virtual bool wants_events() const { return false; }
};

}  // namespace chorus
