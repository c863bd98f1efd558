#include "schedulers/placement/placement_step.hpp"

namespace chorus {

Placement PlacementStep::place(const TaskSpec& task, const ClusterState& cluster, TimePoint now) {
  Placement out;
  explained_ = false;
  const auto views = cluster.views();
  int best = -1;
  double best_score = 0;
  bool later = false;
  if (!policy_.batch_scores()) {
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
  } else {
    fitting_.clear();
    busy_.clear();
    for (std::size_t i = 0; i < views.size(); ++i) {
      Fit fit = policy_.filter(task, views[i]);
      if (fit == Fit::now) {
        fitting_.push_back(&views[i]);
      } else if (fit == Fit::later) {
        later = true;
        busy_.push_back(&views[i]);
      }
    }
    scores_.resize(fitting_.size());
    if (!fitting_.empty()) policy_.score_all(task, fitting_, now, scores_);
    std::size_t chosen = 0;
    for (std::size_t k = 0; k < fitting_.size(); ++k) {
      if (k == 0 || scores_[k] > best_score) {
        chosen = k;
        best_score = scores_[k];
      }
    }
    if (!fitting_.empty()) {
      best = static_cast<int>(fitting_[chosen] - views.data());
      const bool single = !(task.kind == TaskKind::mpi && task.nodes > 1);
      if (single && policy_.waits_for_better(task, views[static_cast<std::size_t>(best)],
                                             best_score, busy_, now)) {
        out.fit = Fit::later;
        out.waiting_for_better = true;
        return out;
      }
      if (single) {
        explanation_.clear();
        explained_ = policy_.explain(task, fitting_, scores_, chosen, now, explanation_);
      }
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
