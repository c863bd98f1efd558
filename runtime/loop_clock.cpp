#include "runtime/loop_clock.hpp"

#include <algorithm>
#include <climits>

namespace chorus {
namespace {

class RealLoopClock final : public LoopClock {
 public:
  TimePoint now() override { return Clock::now(); }
  double wall_seconds() override { return wall_seconds_now(); }
  void wait(std::span<pollfd> fds, TimePoint deadline) override {
    const TimePoint now = Clock::now();
    int timeout = 0;
    if (deadline > now) {
      // Rounded up: waking a millisecond early would spin a round for nothing.
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      timeout = static_cast<int>(std::min<std::int64_t>(ms, INT_MAX));
    }
    (void)::poll(fds.data(), fds.size(), timeout);  // EINTR and timeouts alike: the loop re-polls
  }
};

}  // namespace

LoopClock& real_loop_clock() {
  static RealLoopClock clock;
  return clock;
}

}  // namespace chorus
