// The training rows of `chorus model train` from a run's journal: one row per attempt that
// succeeded and has a placement record with features (the chosen node's feature vector, journaled
// by network-aware placement with the attempt's `running` event), its seconds measured from that
// `running` event to the attempt's `succeeded` event. Pure: no journal access here, so the tests
// build the inputs by hand.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/store/state_store.hpp"
#include "schedulers/netaware/training/training_row.hpp"

namespace chorus::cli {

// One attempt's placement as the journal's placement records give it (PlacementRow of
// runtime/store/state_store.hpp: its candidates[0], the chosen node): the fields a training row
// needs, owned, so this file does not depend on the record's layout beyond them.
struct PlacedAttempt {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
  std::string policy;
  std::vector<float> features;  // the chosen node's; kFeatureCount values or empty
};

struct RunRows {
  std::vector<TrainingRow> rows;
  std::size_t placed = 0;            // attempts with a placement record
  std::size_t succeeded = 0;         // attempts that succeeded (with or without a record)
  std::size_t without_features = 0;  // succeeded, recorded, but no feature vector
};

// Rows in (task, attempt) order of `placements`; `run_id` labels them (the holdout split's group).
// An attempt whose `running` or `succeeded` event is missing, or whose measured time is not
// positive, gives no row.
RunRows training_rows(std::span<const PlacedAttempt> placements,
                      std::span<const EventRecord> events, const std::string& run_id);

}  // namespace chorus::cli
