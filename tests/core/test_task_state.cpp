// The task state machine (core/task_state.hpp): exactly the documented moves.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "core/task_state.hpp"

using chorus::TaskState;

TEST_CASE("Core.TaskState.MachineAllowsTheDocumentedMovesOnly") {
  using S = TaskState;
  const std::set<std::pair<S, S>> allowed = {
      {S::pending, S::ready},     {S::pending, S::cancelled}, {S::pending, S::failed},
      {S::ready, S::running},     {S::ready, S::cancelled},   {S::ready, S::failed},
      {S::running, S::succeeded}, {S::running, S::failed},    {S::running, S::timed_out},
      {S::running, S::cancelled}, {S::failed, S::ready},      {S::failed, S::pending},
      {S::timed_out, S::ready},   {S::timed_out, S::pending},
  };
  const S all[] = {S::pending, S::ready,     S::running,  S::succeeded,
                   S::failed,  S::cancelled, S::timed_out};
  for (S from : all) {
    for (S to : all) {
      CAPTURE(chorus::to_string(from));
      CAPTURE(chorus::to_string(to));
      CHECK(chorus::is_valid_transition(from, to) == (allowed.count({from, to}) != 0));
    }
  }
}
