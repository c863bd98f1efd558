#include "runtime/served_journal.hpp"

namespace chorus {

void ServedJournal::add_route(TaskId global, std::string_view run_id, TaskId local,
                              std::string_view name) {
  while (routes_.size() <= global) routes_.push_back(Route{});
  routes_[global] = Route{run_id, local, name};
}

void ServedJournal::forget_route(TaskId global) {
  routes_.release(global);
}

ServedJournal::Batch& ServedJournal::batch_of(std::string_view run_id) {
  for (std::size_t i = 0; i < used_; ++i) {
    if (batches_[i].run_id == run_id) return batches_[i];
  }
  if (used_ == batches_.size()) batches_.emplace_back();
  Batch& b = batches_[used_++];
  b.run_id = run_id;
  b.events.clear();
  b.groups.clear();
  b.placements.clear();
  return b;
}

Status ServedJournal::append(std::string_view, std::span<const TaskEvent> events,
                             std::span<const TaskGroup> groups,
                             std::span<const PlacementRecord> placements) {
  used_ = 0;
  auto route = [&](TaskId id) -> const Route* {
    if (id >= routes_.size() || !routes_.held(id)) return nullptr;
    const Route& r = routes_[id];
    return r.local != kNoTask ? &r : nullptr;
  };
  for (const TaskEvent& e : events) {
    const Route* r = route(e.task);
    if (r == nullptr)
      return internal_error("journal: task id " + std::to_string(e.task) + " has no run");
    TaskEvent& out = batch_of(r->run_id).events.emplace_back(e);
    out.task = r->local;
    out.name = r->name;
  }
  for (const TaskGroup& g : groups) {
    const Route* r = route(g.task);
    if (r == nullptr) continue;
    TaskGroup& out = batch_of(r->run_id).groups.emplace_back(g);
    out.task = r->local;
  }
  for (const PlacementRecord& p : placements) {
    const Route* r = route(p.task);
    if (r == nullptr) continue;
    PlacementRecord& out = batch_of(r->run_id).placements.emplace_back(p);
    out.task = r->local;
  }
  for (std::size_t i = 0; i < used_; ++i) {
    const Batch& b = batches_[i];
    if (Status s = inner_.append(b.run_id, b.events, b.groups, b.placements); !s.ok()) return s;
  }
  return {};
}

}  // namespace chorus
