// MemoryJournal: a StateStore kept in memory, for tests that drive the coordinator's logic without
// a SQLite file. It keeps the contract's observable behaviour (run ids "<workflow>-<n>", lookups
// by exact id, unique prefix or "latest", events in append order, replay folded like
// SqliteStore's) and nothing durable. fail_appends() makes append() fail from then on, as a full
// disk would.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/store/state_store.hpp"

namespace chorus::test {

class MemoryJournal final : public StateStore {
 public:
  Status check_integrity() override { return {}; }
  Status checkpoint() override { return {}; }
  Result<RunInfo> create_run(RunInfo info) override;
  Status update_run(const RunInfo& info) override;
  Result<RunInfo> find_run(std::string_view id) override;
  Result<RunInfo> latest_run_of(std::string_view workflow_path) override;
  Result<std::vector<RunInfo>> list_runs() override;
  using StateStore::append;
  Status append(std::string_view run_id, std::span<const TaskEvent> events,
                std::span<const TaskGroup> groups,
                std::span<const PlacementRecord> placements) override;
  Result<std::vector<PlacementRow>> placements(std::string_view run_id) override;
  Result<std::vector<TaskGroup>> task_groups(std::string_view run_id) override;
  Status forget_task_groups(std::string_view run_id) override;
  Result<RunState> replay(std::string_view run_id) override;
  Result<std::vector<EventRecord>> events(std::string_view run_id) override;

  // From now on append() fails with io_error(`why`) and changes nothing.
  void fail_appends(std::string why) { append_failure_ = std::move(why); }
  // How many append() calls succeeded (one per coordinator round that had events).
  int appends() const { return appends_; }

 private:
  struct Run {
    RunInfo info;
    std::vector<EventRecord> events;
    std::vector<TaskGroup> groups;
    std::vector<PlacementRow> placements;  // in (task, attempt) order
  };
  Run* find(std::string_view id);

  std::vector<Run> runs_;  // in creation order
  std::string append_failure_;
  int appends_ = 0;
};

}  // namespace chorus::test
