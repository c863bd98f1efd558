#include "schedulers/planners/deadline_dp.hpp"

#include <algorithm>
#include <cmath>

namespace chorus {
namespace {

constexpr std::size_t npos = SpwdFrame::npos;

struct Entry {
  double time = 0;
  double cost = 0;
  std::size_t left = npos;  // leaf: the piece's option; otherwise an entry of each child
  std::size_t right = npos;
};

// Sorts by time and keeps the Pareto front (cost strictly falling as time grows), then the
// cheapest entry of each bucket of width `width`.
void prune(std::vector<Entry>& entries, double width) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.cost < b.cost);
  });
  std::vector<Entry> front;
  for (const Entry& e : entries) {
    if (!front.empty() && e.cost >= front.back().cost - 1e-12 * std::max(1.0, e.cost)) continue;
    // Same bucket as the last kept entry: this one is cheaper, so it replaces it.
    if (!front.empty() && width > 0 &&
        std::floor(front.back().time / width) == std::floor(e.time / width))
      front.pop_back();
    front.push_back(e);
  }
  entries = std::move(front);
}

}  // namespace

std::optional<DeadlineChoice> choose_piece_options(
    const std::vector<SpwdFrame>& frames, const std::vector<std::vector<PieceOption>>& options,
    double deadline, std::size_t buckets) {
  if (frames.empty()) return std::nullopt;
  const double limit = deadline * (1 + 1e-9) + 1e-9;
  const double width = buckets > 0 ? deadline / static_cast<double>(buckets) : 0.0;
  std::vector<std::vector<Entry>> sets(frames.size());
  // Children are created after their parent, so a reverse walk sees them first.
  for (std::size_t f = frames.size(); f-- > 0;) {
    const SpwdFrame& fr = frames[f];
    std::vector<Entry>& out = sets[f];
    if (fr.kind == SpNodeKind::leaf) {
      const auto& opts = options[fr.piece];
      for (std::size_t i = 0; i < opts.size(); ++i) {
        if (opts[i].time <= limit) out.push_back({opts[i].time, opts[i].cost, i, npos});
      }
    } else {
      const auto& l = sets[fr.left];
      const auto& r = sets[fr.right];
      if (fr.kind == SpNodeKind::series) {
        for (std::size_t i = 0; i < l.size(); ++i) {
          for (std::size_t j = 0; j < r.size() && l[i].time + r[j].time <= limit; ++j) {
            out.push_back({l[i].time + r[j].time, l[i].cost + r[j].cost, i, j});
          }
        }
      } else {
        // Both fronts are sorted by time with falling cost: for each time the cheapest option of
        // a part within it is its last one not later.
        std::size_t i = 0, j = 0;
        while (i < l.size() && j < r.size()) {
          out.push_back({std::max(l[i].time, r[j].time), l[i].cost + r[j].cost, i, j});
          const double next_l = i + 1 < l.size() ? l[i + 1].time : HUGE_VAL;
          const double next_r = j + 1 < r.size() ? r[j + 1].time : HUGE_VAL;
          if (next_l == HUGE_VAL && next_r == HUGE_VAL) break;
          if (next_l <= next_r) ++i;
          if (next_r <= next_l) ++j;
          if (i >= l.size()) i = l.size() - 1;
          if (j >= r.size()) j = r.size() - 1;
        }
      }
    }
    prune(out, width);
    if (out.empty()) return std::nullopt;
  }
  DeadlineChoice choice;
  choice.option.assign(options.size(), 0);
  choice.allotted.assign(options.size(), 0.0);
  choice.time = sets[0].back().time;
  choice.cost = sets[0].back().cost;
  struct Visit {
    std::size_t frame, entry;
    double allotted;
  };
  std::vector<Visit> stack{{0, sets[0].size() - 1, std::max(deadline, choice.time)}};
  while (!stack.empty()) {
    const Visit v = stack.back();
    stack.pop_back();
    const Entry& en = sets[v.frame][v.entry];
    const SpwdFrame& fr = frames[v.frame];
    if (fr.kind == SpNodeKind::leaf) {
      choice.option[fr.piece] = en.left;
      choice.allotted[fr.piece] = v.allotted;
    } else if (fr.kind == SpNodeKind::parallel) {
      stack.push_back({fr.left, en.left, v.allotted});
      stack.push_back({fr.right, en.right, v.allotted});
    } else {
      const double tl = sets[fr.left][en.left].time;
      const double tr = sets[fr.right][en.right].time;
      // Proportional to the chosen times; half each when both take no time.
      const double share = tl + tr > 0 ? tl / (tl + tr) : 0.5;
      const double al = tl + (v.allotted - tl - tr) * share;
      stack.push_back({fr.left, en.left, al});
      stack.push_back({fr.right, en.right, v.allotted - al});
    }
  }
  return choice;
}

}  // namespace chorus
