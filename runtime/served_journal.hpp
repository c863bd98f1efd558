// ServedJournal: the StateStore a served instance's one coordinator writes through. The
// coordinator holds every run's tasks under instance-wide ids and names ("<run>/<task>"); this
// decorator gives each event, process group and placement record back to the run the task
// belongs to, with the task's id and name in that run, so each run's journal reads exactly as a
// `chorus run` of it would (status, logs, report, resume).
//
// One round's records of several runs become one append per run, each its own transaction,
// before the round launches anything: atomic per run, which is what a resume needs.
//
// Threading: the coordinator's thread only (like the store it wraps).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/id_slab.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus {

class ServedJournal final : public StateStore {
 public:
  explicit ServedJournal(StateStore& inner) : inner_(inner) {}

  // The task `global` of the coordinator is task `local` named `name` of run `run_id`. The views
  // must outlive the journal. Ids are routed as they are added (global ids grow by one).
  void add_route(TaskId global, std::string_view run_id, TaskId local, std::string_view name);
  // The task `global` will have no more records (its run ended and every record of it was
  // written): its route goes. A record of it after this is an internal_error.
  void forget_route(TaskId global);

  Status check_integrity() override { return inner_.check_integrity(); }
  Status checkpoint() override { return inner_.checkpoint(); }
  Result<RunInfo> create_run(RunInfo info) override { return inner_.create_run(std::move(info)); }
  Status update_run(const RunInfo& info) override { return inner_.update_run(info); }
  Result<RunInfo> find_run(std::string_view id) override { return inner_.find_run(id); }
  Result<RunInfo> latest_run_of(std::string_view path) override {
    return inner_.latest_run_of(path);
  }
  Result<std::vector<RunInfo>> list_runs() override { return inner_.list_runs(); }
  using StateStore::append;
  // `run_id` (the instance's own) is ignored: each record goes to its task's run.
  Status append(std::string_view run_id, std::span<const TaskEvent> events,
                std::span<const TaskGroup> groups,
                std::span<const PlacementRecord> placements) override;
  Result<std::vector<PlacementRow>> placements(std::string_view id) override {
    return inner_.placements(id);
  }
  Result<std::vector<TaskGroup>> task_groups(std::string_view id) override {
    return inner_.task_groups(id);
  }
  Status forget_task_groups(std::string_view id) override { return inner_.forget_task_groups(id); }
  Result<RunState> replay(std::string_view id) override { return inner_.replay(id); }
  Result<std::vector<EventRecord>> events(std::string_view id) override {
    return inner_.events(id);
  }

 private:
  struct Route {
    std::string_view run_id;
    TaskId local = kNoTask;
    std::string_view name;
  };
  struct Batch {
    std::string_view run_id;
    std::vector<TaskEvent> events;
    std::vector<TaskGroup> groups;
    std::vector<PlacementRecord> placements;
  };
  Batch& batch_of(std::string_view run_id);

  StateStore& inner_;
  IdSlab<Route> routes_;        // by the coordinator's id; a finished run's go (forget_route)
  std::vector<Batch> batches_;  // reused round after round
  std::size_t used_ = 0;
};

}  // namespace chorus
