#include "runtime/mpi_spread.hpp"

#include <algorithm>
#include <climits>

namespace chorus {
namespace {

// How many ranks of size `per_rank` fit in `room`, at most `cap`.
int ranks_fitting(const Resources& per_rank, const Resources& room, int cap) {
  std::int64_t n = cap;
  if (per_rank.cores > 0) n = std::min<std::int64_t>(n, room.cores / per_rank.cores);
  if (per_rank.memory_mb > 0) n = std::min<std::int64_t>(n, room.memory_mb / per_rank.memory_mb);
  if (per_rank.gpus > 0) n = std::min<std::int64_t>(n, room.gpus / per_rank.gpus);
  return static_cast<int>(std::max<std::int64_t>(n, 0));
}

struct Candidate {
  int node;
  int fits;  // ranks
};

// Nodes the policy accepts one rank on, with how many ranks fit: in `free` room (now) or in the
// whole capacity (someday). Fullest first, then in node order.
std::vector<Candidate> candidates(const TaskSpec& spec, std::span<const NodeView> views,
                                  const PlacementPolicy& placement, const TaskSpec& probe,
                                  bool now) {
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < views.size(); ++i) {
    int fits = 0;
    if (now) {
      if (placement.filter(probe, views[i]) != Fit::now) continue;
      fits = ranks_fitting(spec.per_rank, views[i].free, spec.ranks);
    } else {
      NodeView empty{views[i].info, views[i].info->capacity, 0};
      if (placement.filter(probe, empty) == Fit::never) continue;
      fits = ranks_fitting(spec.per_rank, views[i].info->capacity, spec.ranks);
    }
    if (fits > 0) out.push_back({static_cast<int>(i), fits});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.fits > b.fits; });
  return out;
}

// Shares for the fewest nodes, or empty when the candidates do not hold every rank.
std::vector<RankShare> fewest_nodes(const std::vector<Candidate>& c, int ranks) {
  std::vector<RankShare> out;
  int left = ranks;
  for (const auto& x : c) {
    if (left == 0) break;
    int take = std::min(left, x.fits);
    out.push_back({x.node, take});
    left -= take;
  }
  if (left > 0) out.clear();
  return out;
}

// Shares for exactly `n` nodes with the block distribution, or empty.
std::vector<RankShare> exact_nodes(const std::vector<Candidate>& c, int ranks, int n) {
  std::vector<RankShare> out;
  if (static_cast<int>(c.size()) < n) return out;
  const int base = ranks / n;
  const int extra = ranks % n;
  for (int j = 0; j < n; ++j) {
    int want = base + (j < extra ? 1 : 0);
    if (c[static_cast<std::size_t>(j)].fits < want) return {};
    out.push_back({c[static_cast<std::size_t>(j)].node, want});
  }
  return out;
}

std::string rank_phrase(const TaskSpec& spec) {
  return std::to_string(spec.ranks) + " ranks x " + to_string(spec.per_rank);
}

}  // namespace

MpiSpread spread_mpi_task(const TaskSpec& spec, std::span<const NodeView> views,
                          const PlacementPolicy& placement, TaskSpec& probe) {
  probe = spec;
  probe.ranks = 1;
  probe.nodes = 0;
  MpiSpread out;
  auto pick = [&](const std::vector<Candidate>& c) {
    return spec.nodes > 1 ? exact_nodes(c, spec.ranks, spec.nodes) : fewest_nodes(c, spec.ranks);
  };
  out.shares = pick(candidates(spec, views, placement, probe, true));
  if (!out.shares.empty()) {
    out.fit = Fit::now;
    return out;
  }
  const auto someday = candidates(spec, views, placement, probe, false);
  if (!pick(someday).empty()) {
    out.fit = Fit::later;
    return out;
  }
  int usable = 0;
  for (const auto& c : someday) usable += c.fits;
  if (spec.nodes > 1 && static_cast<int>(someday.size()) < spec.nodes) {
    out.why = "needs " + std::to_string(spec.nodes) + " nodes, has " +
              std::to_string(someday.size()) + (someday.size() == views.size() ? "" : " usable");
  } else if (spec.nodes > 1) {
    out.why = "needs " + rank_phrase(spec) + " on " + std::to_string(spec.nodes) + " nodes (" +
              std::to_string((spec.ranks + spec.nodes - 1) / spec.nodes) +
              " ranks on the fullest), and no " + std::to_string(spec.nodes) +
              " nodes have that room";
  } else {
    out.why = "needs " + rank_phrase(spec) + ", and the " + std::to_string(views.size()) +
              " nodes hold " + std::to_string(usable) + " such ranks in all";
  }
  return out;
}

std::string spread_node_field(const std::vector<RankShare>& shares, std::span<const NodeView> views,
                              const TaskSpec& spec) {
  std::string out;
  for (const auto& s : shares) {
    if (!out.empty()) out += ',';
    out += views[static_cast<std::size_t>(s.node)].info->name + ':' +
           std::to_string(static_cast<std::int64_t>(s.ranks) * spec.per_rank.cores);
  }
  return out;
}

}  // namespace chorus
