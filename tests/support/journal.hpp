// Reading a run's journal back in tests, the way `chorus status` finds it.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/store/state_store.hpp"

namespace chorus::test {

// Every event of the latest run journaled in `state_dir`/chorus.db (a copy: the store closes).
inline std::vector<EventRecord> latest_run_events(const std::string& state_dir) {
  auto store = open_sqlite_store(state_dir + "/chorus.db");
  REQUIRE(store.ok());
  auto run = (*store)->find_run("latest");
  REQUIRE(run.ok());
  auto events = (*store)->events(run->id);
  REQUIRE(events.ok());
  return std::move(*events);
}

}  // namespace chorus::test
