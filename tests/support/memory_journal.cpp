#include "support/memory_journal.hpp"

#include <algorithm>

namespace chorus::test {

Result<RunInfo> MemoryJournal::create_run(RunInfo info) {
  int n = 1;
  for (const auto& r : runs_) {
    if (r.info.workflow_name == info.workflow_name) ++n;
  }
  info.id = info.workflow_name + "-" + std::to_string(n);
  if (info.token.empty()) info.token = new_run_token();
  runs_.push_back(Run{info, {}, {}, {}});
  return info;
}

MemoryJournal::Run* MemoryJournal::find(std::string_view id) {
  for (auto& r : runs_) {
    if (r.info.id == id) return &r;
  }
  return nullptr;
}

Status MemoryJournal::update_run(const RunInfo& info) {
  Run* r = find(info.id);
  if (r == nullptr) return not_found("no run '" + info.id + "'");
  r->info = info;
  return {};
}

Result<RunInfo> MemoryJournal::find_run(std::string_view id) {
  if (id == "latest") {
    if (runs_.empty()) return not_found("no runs yet");
    return runs_.back().info;
  }
  if (Run* r = find(id)) return r->info;
  const Run* match = nullptr;
  for (const auto& r : runs_) {
    if (r.info.id.starts_with(id)) {
      if (match != nullptr) return invalid_argument("'" + std::string(id) + "' is ambiguous");
      match = &r;
    }
  }
  if (match == nullptr) return not_found("no run '" + std::string(id) + "'");
  return match->info;
}

Result<RunInfo> MemoryJournal::latest_run_of(std::string_view workflow_path) {
  for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
    if (it->info.workflow_path == workflow_path) return it->info;
  }
  return not_found("no run of " + std::string(workflow_path));
}

Result<std::vector<RunInfo>> MemoryJournal::list_runs() {
  std::vector<RunInfo> out;
  for (const auto& r : runs_) out.push_back(r.info);
  return out;
}

Status MemoryJournal::append(std::string_view run_id, std::span<const TaskEvent> events,
                             std::span<const TaskGroup> groups,
                             std::span<const PlacementRecord> placements) {
  if (!append_failure_.empty()) return io_error(append_failure_);
  Run* r = find(run_id);
  if (r == nullptr) return not_found("no run '" + std::string(run_id) + "'");
  for (const auto& e : events) {
    EventRecord rec;
    rec.seq = static_cast<std::int64_t>(r->events.size()) + 1;
    rec.task = e.task;
    rec.name = std::string(e.name);
    rec.attempt = e.attempt;
    rec.state = e.state;
    rec.time = e.time;
    rec.exit_code = e.exit_code;
    rec.fingerprint = e.fingerprint;
    rec.detail = e.detail;
    rec.kind = e.kind;
    rec.cores = e.cores;
    rec.node = std::string(e.node);
    r->events.push_back(std::move(rec));
  }
  for (const auto& g : groups) {
    auto same = [&](const TaskGroup& x) { return x.task == g.task && x.attempt == g.attempt; };
    auto it = std::find_if(r->groups.begin(), r->groups.end(), same);
    if (it != r->groups.end()) {
      *it = g;
    } else {
      r->groups.push_back(g);
    }
  }
  for (const auto& p : placements) {
    PlacementRow row;
    row.task = p.task;
    row.attempt = p.attempt;
    for (const auto& e : events) {
      if (e.task == p.task && e.attempt == p.attempt) {
        row.name = std::string(e.name);
        break;
      }
    }
    row.policy = std::string(p.policy);
    row.basis = std::string(p.basis);
    for (const auto& c : p.candidates) {
      row.candidates.push_back(
          {std::string(c.node), c.predicted_s, {c.features.begin(), c.features.end()}});
    }
    auto before = [](const PlacementRow& a, const PlacementRow& b) {
      return a.task != b.task ? a.task < b.task : a.attempt < b.attempt;
    };
    auto it = std::lower_bound(r->placements.begin(), r->placements.end(), row, before);
    if (it != r->placements.end() && it->task == row.task && it->attempt == row.attempt) {
      *it = std::move(row);
    } else {
      r->placements.insert(it, std::move(row));
    }
  }
  ++appends_;
  return {};
}

Result<std::vector<PlacementRow>> MemoryJournal::placements(std::string_view run_id) {
  Run* r = find(run_id);
  if (r == nullptr) return not_found("no run '" + std::string(run_id) + "'");
  return r->placements;
}

Result<std::vector<TaskGroup>> MemoryJournal::task_groups(std::string_view run_id) {
  Run* r = find(run_id);
  if (r == nullptr) return not_found("no run '" + std::string(run_id) + "'");
  return r->groups;
}

Status MemoryJournal::forget_task_groups(std::string_view run_id) {
  Run* r = find(run_id);
  if (r == nullptr) return not_found("no run '" + std::string(run_id) + "'");
  r->groups.clear();
  return {};
}

// Folded as SqliteStore::replay does: the last event of a task gives its state, attempt, exit
// code, fingerprint and detail; 'running' events its first and last start; terminal ones its end.
Result<RunState> MemoryJournal::replay(std::string_view run_id) {
  Run* r = find(run_id);
  if (r == nullptr) return not_found("no run '" + std::string(run_id) + "'");
  RunState state;
  state.info = r->info;
  std::map<TaskId, TaskRecord> by_task;
  for (const auto& e : r->events) {
    auto [it, fresh] = by_task.try_emplace(e.task);
    TaskRecord& rec = it->second;
    if (fresh) {
      rec.task = e.task;
      rec.name = e.name;
    }
    rec.state = e.state;
    rec.attempt = e.attempt;
    rec.exit_code = e.exit_code;
    rec.fingerprint = e.fingerprint;
    rec.detail = e.detail;
    if (e.state == TaskState::running) {
      if (rec.first_start == 0) rec.first_start = e.time;
      rec.last_start = e.time;
      rec.node = e.node;
    } else if (is_terminal(e.state)) {
      rec.end = e.time;
    }
  }
  for (auto& [id, rec] : by_task) state.tasks.push_back(std::move(rec));
  return state;
}

Result<std::vector<EventRecord>> MemoryJournal::events(std::string_view run_id) {
  Run* r = find(run_id);
  if (r == nullptr) return not_found("no run '" + std::string(run_id) + "'");
  return r->events;
}

}  // namespace chorus::test
