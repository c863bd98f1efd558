// LoopClock: where the coordinator's loop reads the time and waits for activity.
//
// The real one (real_loop_clock()) is the steady clock, the wall clock and poll(2). A test
// injects a manual one (CoordinatorOptions::clock) to drive the loop's time-dependent logic
// (restart back-offs, journal delays, ticks) without sleeping: its wait() is where the test acts.
#pragma once

#include <poll.h>

#include <span>

#include "core/units.hpp"

namespace chorus {

class LoopClock {
 public:
  virtual ~LoopClock() = default;
  virtual TimePoint now() = 0;
  // Wall seconds since the Unix epoch: the journal's event times.
  virtual double wall_seconds() = 0;
  // Blocks until one of `fds` is readable or `deadline` passes (early returns are fine: the loop
  // re-polls everything).
  virtual void wait(std::span<pollfd> fds, TimePoint deadline) = 0;
};

// Steady clock, wall clock, poll(2). Shared, stateless.
LoopClock& real_loop_clock();

}  // namespace chorus
