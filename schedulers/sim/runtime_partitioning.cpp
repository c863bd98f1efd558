#include "schedulers/sim/runtime_partitioning.hpp"

#include <chrono>

#include <cstdint>
#include <vector>

namespace chorus::sim {

Workload partition_divisible(const Workload& w, double target_s) {
  Workload out;
  out.name = w.name;
  out.jobs.reserve(w.jobs.size());
  // Jobs tied to others by after_other keep their task indices (the references name them).
  std::vector<bool> tied(w.jobs.size(), false);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    for (const SimTask& t : w.jobs[i].tasks) {
      for (const TaskRef& r : t.after_other) tied[i] = tied[r.job] = true;
    }
  }
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const SimJob& j = w.jobs[i];
    if (!j.divisible || !(target_s > 0) || tied[i]) {
      out.jobs.push_back(j);
      continue;
    }
    SimJob split = j;
    split.tasks.clear();
    // first[k], count[k]: where the pieces of original task k landed.
    std::vector<std::uint32_t> first(j.tasks.size()), count(j.tasks.size());
    for (std::size_t k = 0; k < j.tasks.size(); ++k) {
      const SimTask& t = j.tasks[k];
      std::vector<std::uint32_t> after;
      for (auto a : t.after) {
        for (std::uint32_t p = 0; p < count[a]; ++p) after.push_back(first[a] + p);
      }
      first[k] = static_cast<std::uint32_t>(split.tasks.size());
      for (double piece : partition_runtime(t.runtime_s, target_s)) {
        // A piece moves its part of the task's data (and burns its part of the CPU).
        const double f = t.runtime_s > 0 ? piece / t.runtime_s : 0;
        DataMovement d = t.data;
        d.input_bytes = static_cast<std::uint64_t>(static_cast<double>(d.input_bytes) * f);
        d.output_bytes = static_cast<std::uint64_t>(static_cast<double>(d.output_bytes) * f);
        d.cpu = std::chrono::duration_cast<Duration>(d.cpu * f);
        split.tasks.push_back(SimTask{piece, t.cores, after, {}, t.ranks, t.nodes, d});
      }
      count[k] = static_cast<std::uint32_t>(split.tasks.size()) - first[k];
    }
    out.jobs.push_back(std::move(split));
  }
  return out;
}

}  // namespace chorus::sim
