// The task state machine.
//
//   pending -> ready -> running -> succeeded
//      |         |        |  \--> failed | timed_out --(retries left)--> ready | pending
//      |         |        \-----> cancelled
//      \---------+--> cancelled   (run cancelled, or a dependency did not succeed)
//                \--> failed      (it can never start: see is_valid_transition)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace chorus {

enum class TaskState : std::uint8_t {
  pending,  // waiting for dependencies
  ready,    // dependencies done, waiting for the scheduler
  running,  // handed to a launcher (journaled before the launch)
  succeeded,
  failed,
  cancelled,
  timed_out,
};

const char* to_string(TaskState s);
std::optional<TaskState> parse_task_state(std::string_view text);

// A task that a quorum round closed without (TaskSubmitter::drop, docs/quorum-workflows.md) ends
// cancelled, with a journal detail that starts with this prefix: not a failure, its dependents
// count it as done, and a resumed run neither reruns it nor waits for it again.
inline constexpr std::string_view kDroppedDetailPrefix = "dropped by quorum: ";
inline bool is_dropped_detail(std::string_view detail) {
  return detail.substr(0, kDroppedDetailPrefix.size()) == kDroppedDetailPrefix;
}

inline bool is_terminal(TaskState s) {
  return s == TaskState::succeeded || s == TaskState::failed || s == TaskState::cancelled ||
         s == TaskState::timed_out;
}

// Whether the state machine above allows from -> to. Beyond the plain path:
// - pending | ready -> failed: a task that can never start fails without running (it can never
//   fit the nodes, a service it uses failed for good, or TaskSubmitter::fail_unstarted). It is a
//   failure, not a cancellation: the run fails because of it.
// - failed | timed_out -> ready | pending: a new attempt (a retry, or a service replica's
//   restart). The ended attempt is journaled first; the new one waits in pending when it must
//   (a service it uses is not up, a restart back-off) and is queued (ready) otherwise.
// Inline (one table lookup): the coordinator checks every move it makes.
inline bool is_valid_transition(TaskState from, TaskState to) {
  constexpr auto bit = [](TaskState s) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(s));
  };
  using S = TaskState;
  // Indexed by `from`, in the enum's order: the states it may move to.
  constexpr std::uint8_t kAllowed[] = {
      static_cast<std::uint8_t>(bit(S::ready) | bit(S::cancelled) | bit(S::failed)),    // pending
      static_cast<std::uint8_t>(bit(S::running) | bit(S::cancelled) | bit(S::failed)),  // ready
      static_cast<std::uint8_t>(bit(S::succeeded) | bit(S::failed) | bit(S::timed_out) |
                                bit(S::cancelled)),                // running
      0,                                                           // succeeded
      static_cast<std::uint8_t>(bit(S::ready) | bit(S::pending)),  // failed
      0,                                                           // cancelled
      static_cast<std::uint8_t>(bit(S::ready) | bit(S::pending)),  // timed_out
  };
  const auto f = static_cast<std::size_t>(from);
  return f < sizeof kAllowed && (kAllowed[f] & bit(to)) != 0;
}

}  // namespace chorus
