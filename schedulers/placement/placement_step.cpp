#include "schedulers/placement/placement_step.hpp"

namespace chorus {

Placement PlacementStep::place(const TaskSpec& task, const ClusterState& cluster) {
  Placement out;
  const auto views = cluster.views();
  int best = -1;
  double best_score = 0;
  bool later = false;
  for (std::size_t i = 0; i < views.size(); ++i) {
    Fit fit = policy_.filter(task, views[i]);
    if (fit == Fit::now) {
      double s = policy_.score(task, views[i]);
      if (best < 0 || s > best_score) {
        best = static_cast<int>(i);
        best_score = s;
      }
    } else if (fit == Fit::later) {
      later = true;
    }
  }
  if (task.kind == TaskKind::mpi && (task.nodes > 1 || (best < 0 && task.nodes == 0))) {
    out.fit = spread_ranks(task, views, policy_, out.shares, out.why, probe_, now_, someday_);
    if (out.fit == Fit::now) {
      out.node = out.shares.front().node;
    } else if (out.fit == Fit::never) {
      out.why = "can never run on these nodes: " + out.why;
    }
    return out;
  }
  if (best >= 0) {
    out.fit = Fit::now;
    out.node = best;
  } else if (later) {
    out.fit = Fit::later;
  } else {
    out.why = "can never run here: needs " + to_string(task.total()) + ", the largest node has " +
              to_string(cluster.largest_node());
  }
  return out;
}

}  // namespace chorus
