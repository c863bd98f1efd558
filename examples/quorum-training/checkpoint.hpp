// The parameter server's checkpoint, <state>/checkpoint.json, written after every
// `checkpoint_every` closed rounds through a temporary file and a rename (atomic: a PS killed at
// any instant leaves the previous checkpoint or the new one, never a torn file).
//
// Where the round count lives: here, beside the weights, not in the Chorus journal. The journal
// records the service's attempts (started, ready, failed, restarted), not what a program did
// inside one; and weights and round must be read back as one consistent pair — a round count in
// the journal and weights in a file could disagree after a kill between the two writes. The
// journal still shows each restart of the PS service; the result JSON lists the rounds each
// start resumed from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace quorum_training {

// One closed round as the PS saw it.
struct RoundRecord {
  int round = 0;
  int k = 0;                     // gradients aggregated
  int target = 0;                // the policy's target() at the close (0: none)
  double start_s = 0;            // since the training began (wall clock, across restarts)
  double duration_s = 0;         // broadcast to close
  double loss = 0;               // full training loss after the update
  std::vector<double> arrivals;  // per worker, seconds after the round's start; < 0: none
  std::vector<bool> used;        // per worker: aggregated
};

struct Checkpoint {
  int round_done = 0;  // the last closed round; training resumes at round_done + 1
  std::vector<double> weights;
  double train_start_unix = 0;  // wall clock of round 1's start (time to target spans restarts)
  std::vector<int> resumed_at;  // the round each restart resumed at
  std::vector<std::int64_t> rejected;  // per Rejection
  std::int64_t late_dropped = 0;
  std::int64_t late_timed = 0;
  // Not in checkpoint.json (it would grow every round): <state>/rounds.jsonl, one line per closed
  // round, appended before the checkpoint that covers it; a resume keeps the lines up to
  // round_done and drops the rest (rounds that will be run again).
  std::vector<RoundRecord> rounds;
};

chorus::Status write_checkpoint(const std::string& path, const Checkpoint& cp);
// Appends one round's line to the rounds log (no fsync: atomic against the process's death, the
// failure this handles, not against the machine's). Errors: io_error.
chorus::Status append_round(const std::string& rounds_path, const RoundRecord& round);
// The checkpoint and the rounds log's lines up to its round_done (the log rewritten to those).
// Errors: not_found when there is none (a first start), invalid_argument for a file that is not
// a checkpoint of `dim` weights (named, with what is wrong).
chorus::Result<Checkpoint> read_checkpoint(const std::string& path, const std::string& rounds_path,
                                           std::size_t dim);

std::string rounds_json(const std::vector<RoundRecord>& rounds);  // for the result file

}  // namespace quorum_training
