#include "cli/model/training_rows.hpp"

#include <map>
#include <utility>

namespace chorus::cli {

RunRows training_rows(std::span<const PlacedAttempt> placements,
                      std::span<const EventRecord> events, const std::string& run_id) {
  // (task, attempt) -> (running time, succeeded time); the last `running` of an attempt counts
  // (a resumed run journals an attempt's start again only with a new attempt number, but a
  // journal is input: take the latest start before its end).
  struct Times {
    double running = -1;
    double succeeded = -1;
  };
  std::map<std::pair<TaskId, std::uint32_t>, Times> times;
  for (const EventRecord& e : events) {
    if (e.state == TaskState::running) {
      times[{e.task, e.attempt}].running = e.time;
    } else if (e.state == TaskState::succeeded) {
      times[{e.task, e.attempt}].succeeded = e.time;
    }
  }
  RunRows out;
  for (const auto& [key, t] : times) {
    if (t.succeeded >= 0) ++out.succeeded;
  }
  for (const PlacedAttempt& p : placements) {
    ++out.placed;
    const auto it = times.find({p.task, p.attempt});
    if (it == times.end() || it->second.running < 0 || it->second.succeeded < 0) continue;
    const double seconds = it->second.succeeded - it->second.running;
    if (!(seconds > 0)) continue;
    if (p.features.size() != kFeatureCount) {
      ++out.without_features;
      continue;
    }
    TrainingRow row;
    std::copy(p.features.begin(), p.features.end(), row.features.begin());
    row.seconds = seconds;
    row.run = run_id;
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace chorus::cli
