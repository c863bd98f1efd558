#include "schedulers/sim/runtime_partitioning.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace chorus::sim {
namespace {

SimTask piece_of(const SimTask& t, double piece, std::vector<std::uint32_t> after) {
  // A piece moves its part of the task's data (and burns its part of the CPU).
  const double f = t.runtime_s > 0 ? piece / t.runtime_s : 0;
  DataMovement d = t.data;
  d.input_bytes = static_cast<std::uint64_t>(static_cast<double>(d.input_bytes) * f);
  d.output_bytes = static_cast<std::uint64_t>(static_cast<double>(d.output_bytes) * f);
  d.cpu = std::chrono::duration_cast<Duration>(d.cpu * f);
  return SimTask{piece, t.cores, std::move(after), {}, t.ranks, t.nodes, d};
}

bool waits_inside(const SimJob& j) {
  for (const SimTask& t : j.tasks)
    if (!t.after.empty()) return true;
  return false;
}

// Round-robin over the job's tasks, none of which waits for another.
void interleave_pieces(const SimJob& j, double target_s, SimJob& split) {
  std::vector<std::vector<double>> pieces;
  pieces.reserve(j.tasks.size());
  std::size_t most = 0;
  for (const SimTask& t : j.tasks) {
    pieces.push_back(partition_runtime(t.runtime_s, target_s));
    most = std::max(most, pieces.back().size());
  }
  for (std::size_t p = 0; p < most; ++p)
    for (std::size_t k = 0; k < j.tasks.size(); ++k)
      if (p < pieces[k].size()) split.tasks.push_back(piece_of(j.tasks[k], pieces[k][p], {}));
}

}  // namespace

std::optional<PieceOrder> parse_piece_order(std::string_view text) {
  if (text == "listed") return PieceOrder::listed;
  if (text == "interleaved") return PieceOrder::interleaved;
  return std::nullopt;
}

Workload partition_divisible(const Workload& w, double target_s, PieceOrder order) {
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
    if (order == PieceOrder::interleaved && !waits_inside(j)) {
      interleave_pieces(j, target_s, split);
      out.jobs.push_back(std::move(split));
      continue;
    }
    // first[k], count[k]: where the pieces of original task k landed.
    std::vector<std::uint32_t> first(j.tasks.size()), count(j.tasks.size());
    for (std::size_t k = 0; k < j.tasks.size(); ++k) {
      const SimTask& t = j.tasks[k];
      std::vector<std::uint32_t> after;
      for (auto a : t.after) {
        for (std::uint32_t p = 0; p < count[a]; ++p) after.push_back(first[a] + p);
      }
      first[k] = static_cast<std::uint32_t>(split.tasks.size());
      for (double piece : partition_runtime(t.runtime_s, target_s))
        split.tasks.push_back(piece_of(t, piece, after));
      count[k] = static_cast<std::uint32_t>(split.tasks.size()) - first[k];
    }
    out.jobs.push_back(std::move(split));
  }
  return out;
}

}  // namespace chorus::sim
