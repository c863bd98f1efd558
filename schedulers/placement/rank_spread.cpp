#include "schedulers/placement/rank_spread.hpp"

#include <algorithm>
#include <cstdint>

namespace chorus {
namespace {

// Nodes the policy accepts one rank on, with how many ranks fit: in the free room (now) or in the
// whole capacity (someday). Fullest first, then in node order.
void candidates(const TaskSpec& spec, std::span<const NodeView> views,
                const PlacementPolicy& placement, const TaskSpec& probe, bool now,
                std::vector<RankCandidate>& out) {
  out.clear();
  for (std::size_t i = 0; i < views.size(); ++i) {
    int fits = 0;
    if (now) {
      if (placement.filter(probe, views[i]) != Fit::now) continue;
      fits = ranks_fitting(spec.per_rank, views[i].free, spec.ranks);
    } else {
      NodeView empty = views[i];
      empty.free = views[i].info->capacity;
      empty.running = 0;
      if (placement.filter(probe, empty) == Fit::never) continue;
      fits = ranks_fitting(spec.per_rank, views[i].info->capacity, spec.ranks);
    }
    if (fits > 0) out.push_back({static_cast<int>(i), fits});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RankCandidate& a, const RankCandidate& b) { return a.fits > b.fits; });
}

// Shares for the fewest nodes; false (shares cleared) when the candidates do not hold every rank.
bool fewest_nodes(const std::vector<RankCandidate>& c, int ranks, std::vector<RankShare>& out) {
  out.clear();
  int left = ranks;
  for (const auto& x : c) {
    if (left == 0) break;
    int take = std::min(left, x.fits);
    out.push_back({x.node, take});
    left -= take;
  }
  if (left > 0) out.clear();
  return left == 0;
}

// Shares for exactly `n` nodes with the block distribution; false (shares cleared) if none.
bool exact_nodes(const std::vector<RankCandidate>& c, int ranks, int n,
                 std::vector<RankShare>& out) {
  out.clear();
  if (static_cast<int>(c.size()) < n) return false;
  for (int j = 0; j < n; ++j) {
    int want = block_ranks(ranks, n, j);
    if (c[static_cast<std::size_t>(j)].fits < want) {
      out.clear();
      return false;
    }
    out.push_back({c[static_cast<std::size_t>(j)].node, want});
  }
  return true;
}

std::string rank_phrase(const TaskSpec& spec) {
  return std::to_string(spec.ranks) + " ranks x " + to_string(spec.per_rank);
}

}  // namespace

int ranks_fitting(const Resources& per_rank, const Resources& room, int cap) {
  std::int64_t n = cap;
  if (per_rank.cores > 0) n = std::min<std::int64_t>(n, room.cores / per_rank.cores);
  if (per_rank.memory_mb > 0) n = std::min<std::int64_t>(n, room.memory_mb / per_rank.memory_mb);
  if (per_rank.gpus > 0) n = std::min<std::int64_t>(n, room.gpus / per_rank.gpus);
  return static_cast<int>(std::max<std::int64_t>(n, 0));
}

Fit spread_ranks(const TaskSpec& spec, std::span<const NodeView> views,
                 const PlacementPolicy& placement, std::vector<RankShare>& shares, std::string& why,
                 TaskSpec& probe, std::vector<RankCandidate>& now,
                 std::vector<RankCandidate>& someday) {
  probe = spec;
  probe.ranks = 1;
  probe.nodes = 0;
  auto pick = [&](const std::vector<RankCandidate>& c) {
    return spec.nodes > 1 ? exact_nodes(c, spec.ranks, spec.nodes, shares)
                          : fewest_nodes(c, spec.ranks, shares);
  };
  candidates(spec, views, placement, probe, true, now);
  if (pick(now)) return Fit::now;
  candidates(spec, views, placement, probe, false, someday);
  if (pick(someday)) {
    shares.clear();
    return Fit::later;
  }
  int usable = 0;
  for (const auto& c : someday) usable += c.fits;
  if (spec.nodes > 1 && static_cast<int>(someday.size()) < spec.nodes) {
    why = "needs " + std::to_string(spec.nodes) + " nodes, has " + std::to_string(someday.size()) +
          (someday.size() == views.size() ? "" : " usable");
  } else if (spec.nodes > 1) {
    why = "needs " + rank_phrase(spec) + " on " + std::to_string(spec.nodes) + " nodes (" +
          std::to_string((spec.ranks + spec.nodes - 1) / spec.nodes) +
          " ranks on the fullest), and no " + std::to_string(spec.nodes) + " nodes have that room";
  } else {
    why = "needs " + rank_phrase(spec) + ", and the " + std::to_string(views.size()) +
          " nodes hold " + std::to_string(usable) + " such ranks in all";
  }
  return Fit::never;
}

}  // namespace chorus
