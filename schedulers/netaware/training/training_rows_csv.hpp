// Training rows as CSV: header = the feature names (feature_names() order or any order), then
// `seconds`, optionally `run` (the holdout split's group; without it every row of a file is one
// run named after the file). An empty field or `nan` is a missing value. What
// `chorus simulate --rows-out` and the benches write and `chorus model train --rows` reads.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "schedulers/netaware/training/training_row.hpp"

namespace chorus {

// Errors: io_error naming the file; invalid_argument at path:line for a header that lacks a
// feature or `seconds`, names a column twice or one we do not know, a row with another number of
// fields, a value that is not a number.
Result<std::vector<TrainingRow>> read_training_rows_csv(const std::string& path);

// Header and rows in feature_names() order, then seconds and run; numbers in %.9g (a float's
// value survives the round trip).
void write_training_rows_csv(std::ostream& out, std::span<const TrainingRow> rows);

}  // namespace chorus
