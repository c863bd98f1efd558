// One training row of the completion-time model: the feature vector of the node an attempt ran
// on and the seconds it took there, with the run it came from (holdout splits are by whole runs,
// never by rows: rows of one run share a background schedule and would leak across the split).
#pragma once

#include <string>

#include "schedulers/netaware/features.hpp"

namespace chorus {

struct TrainingRow {
  FeatureVector features{};
  double seconds = 0;
  std::string run;  // the run (or the CSV's `run` column, else the file) it came from
};

}  // namespace chorus
