// QuorumRecord: what closed in one quorum round of a repeat group, written as a small JSON file
// (RepeatGroup::quorum->file) for the tasks after the sweep (CHORUS_QUORUM_FILE) and `until:`.
// The format is documented in docs/quorum-workflows.md.
#pragma once

#include <string>
#include <vector>

#include "core/status.hpp"

namespace chorus {

struct QuorumRecord {
  std::string group;
  std::string sweep;
  std::string policy;
  int round = 1;
  int n = 0;
  int target = 0;             // the policy's k at the close (QuorumPolicy::target), 0 = none
  double closed_after_s = 0;  // from the round's start
  struct Member {
    std::string name;
    double arrived_after_s = -1;  // from the round's start; < 0 when it did not arrive in time
  };
  std::vector<Member> used;     // arrived before the close, in arrival order
  std::vector<Member> dropped;  // cancelled at the close
  // Finished, but not used: only in a resumed session, a member that succeeded before the kill
  // and whose replay came after the round closed again.
  std::vector<Member> late;
};

// The record as JSON text (one object; names escaped).
std::string quorum_record_json(const QuorumRecord& record);

// Writes it to `path` (directories made; written to a temporary file, then renamed, so a reader
// never sees half of it). Errors: io_error naming the path and the system's reason.
Status write_quorum_record(const std::string& path, const QuorumRecord& record);

}  // namespace chorus
