// Deadline distribution by dynamic programming over SPWD's frames: a refinement of step 5 that is
// not in the paper. The paper gives each part of a series node a share of the deadline in
// proportion to its mean-runtime weight. That share ignores what time is worth to each part: a
// wide level of costly tasks saves much more per second than a chain of one short task, so the
// optimum gives it more (Montage: 48 mProject tasks against a chain of single tasks).
//
// Each piece offers a few (time, cost) options, exact CBC solutions at several deadlines. Bottom
// up over the frames, a frame keeps its Pareto set of (time, cost): a series frame adds the times
// of one option of each part, a parallel frame takes the larger. The cheapest root option within
// the deadline picks one option per piece. Times are the pieces' real makespans (never rounded), so
// the choice meets the deadline on the series-parallel graph, hence on the DAG.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "schedulers/planners/spwd_decomposition.hpp"

namespace chorus {

struct PieceOption {
  double time = 0;  // the piece's makespan with this option
  double cost = 0;
};

struct DeadlineChoice {
  std::vector<std::size_t> option;  // per piece: index into its options
  double time = 0;                  // of the root frame: at most the deadline
  double cost = 0;                  // summed over pieces (tasks shared by pieces count twice)
  // Per piece: a deadline at least its chosen option's time, such that pieces meeting them meet
  // the deadline together. The root's slack (deadline - time) is handed down: a series frame
  // splits what it gets in proportion to its parts' chosen times, a parallel frame gives both
  // parts all of it. Re-solving a piece at its allotted deadline can only lower its cost.
  std::vector<double> allotted;
};

// `options[p]` lists piece p's options (at least one each). Returns the cheapest choice whose
// root time is at most `deadline`, optimal up to one approximation: at each frame, of the
// options whose times fall in the same interval of width deadline / buckets only the cheapest is
// kept (this bounds the work to buckets^2 per series frame). nullopt when no choice meets the
// deadline.
std::optional<DeadlineChoice> choose_piece_options(
    const std::vector<SpwdFrame>& frames, const std::vector<std::vector<PieceOption>>& options,
    double deadline, std::size_t buckets);

}  // namespace chorus
